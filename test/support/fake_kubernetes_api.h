// A stand-in for the Kubernetes API server, for the node identity tests: the real API server
// cannot run in the test environment. An HTTPS server on 127.0.0.1 (oxide-sim's libmicrohttpd
// server, src/sim/http_server.h) with a certificate made by the openssl CLI, running its own libuv
// loop on its own thread, answering GET /api/v1/nodes/<name> with what the test set, and a
// service account directory (token, ca.crt) for it. Methods: the test thread; the handler runs on
// the server's thread and reads the answers under a lock.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "support/temp_dir.h"

namespace oxide::testing {

class FakeKubernetesApi {
 public:
  static constexpr const char* kToken = "k8s-sa-token-test-5ecr3t-do-not-log";

  struct Answer {
    int status = 200;
    std::string body;
    bool never = false;  // accept the request and never answer it
  };

  // Makes the certificate and the service account directory, and starts serving.
  FakeKubernetesApi();
  ~FakeKubernetesApi();
  FakeKubernetesApi(const FakeKubernetesApi&) = delete;
  FakeKubernetesApi& operator=(const FakeKubernetesApi&) = delete;

  // What GET /api/v1/nodes/<name> answers (404 with a Status object for a name never set).
  void SetAnswer(const std::string& node_name, Answer answer);
  // A Node object; no spec.providerID when `provider_id` is empty. With `uninitialized`, its
  // spec.taints holds the cloud controller manager's node.cloudprovider.kubernetes.io/uninitialized
  // (with `taint_effect`) after an unrelated taint, as a Node at first boot does.
  static std::string NodeJson(const std::string& name, const std::string& provider_id,
                              bool uninitialized = false,
                              const std::string& taint_effect = "NoSchedule");

  std::string host() const { return "127.0.0.1"; }
  std::string port() const { return std::to_string(port_); }
  std::string credentials_dir() const { return dir_.File("serviceaccount"); }
  // A service account directory whose ca.crt is another CA's (TLS must fail against it).
  std::string wrong_ca_credentials_dir() const { return dir_.File("other-serviceaccount"); }

  // Requests received so far, and the Authorization header of the last one.
  int requests() const;
  std::string last_authorization() const;
  // Blocks until `count` requests have arrived (woken by the server's thread); false after 15 s.
  bool WaitForRequests(int count) const;

 private:
  struct Loop;
  void Handle(const std::string& path, const std::string* authorization, Answer* answer);

  TempDir dir_;
  uint16_t port_ = 0;
  mutable std::mutex mutex_;
  mutable std::condition_variable arrived_;
  std::map<std::string, Answer> answers_;
  int requests_ = 0;
  std::string last_authorization_;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace oxide::testing
