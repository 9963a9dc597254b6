// A stand-in for the Kubernetes API server, for the node identity and startup taint tests: the
// real API server cannot run in the test environment. An HTTPS server on 127.0.0.1 (oxide-sim's
// libmicrohttpd server, src/sim/http_server.h) with a certificate made by the openssl CLI, running
// its own libuv loop on its own thread, answering GET /api/v1/nodes/<name>, GET
// /apis/storage.k8s.io/v1/csinodes/<name> and PATCH /api/v1/nodes/<name> with what the test set
// (for the patch: answers replayed in order, e.g. a recorded kube-apiserver exchange), logging
// every request, and a service account directory (token, ca.crt) for it. Methods: the test
// thread; the handler runs on the server's thread and reads the answers under a lock.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "node/kubernetes_api.h"
#include "support/temp_dir.h"

namespace oxide::testing {

class FakeKubernetesApi {
 public:
  static constexpr const char* kToken = "k8s-sa-token-test-5ecr3t-do-not-log";

  struct Answer {
    int status = 200;
    std::string body;
    bool never = false;  // accept the request and never answer it
    // Once answered: the Node's GET answer becomes this 200 body (a patch took effect, or someone
    // else changed the Node meanwhile). Empty: unchanged.
    std::string next_node = "";
  };

  // A request as received.
  struct Request {
    std::string method;
    std::string path;
    std::string content_type;  // empty when there was none
    std::string body;
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
  // What GET /apis/storage.k8s.io/v1/csinodes/<name> answers (404 for a name never set).
  void SetCsiNodeAnswer(const std::string& node_name, Answer answer);
  // The next answer to PATCH /api/v1/nodes/<name>; each patch takes the oldest answer queued.
  // With none queued, a patch is answered 500 (the test did not expect it). A PATCH whose
  // Content-Type is not one kube-apiserver accepts for a patch is answered 415, as it does.
  void QueuePatchAnswer(const std::string& node_name, Answer answer);

  static std::string NodeJson(const std::string& name, const std::string& provider_id,
                              bool uninitialized = false,
                              const std::string& taint_effect = "NoSchedule");

  std::string host() const { return "127.0.0.1"; }
  std::string port() const { return std::to_string(port_); }
  std::string credentials_dir() const { return dir_.File("serviceaccount"); }
  // How a client reaches this server: its address and credentials, 5 s timeouts, one attempt.
  node::KubernetesApiOptions ClientOptions() const {
    node::KubernetesApiOptions options{.host = host(),
                                       .port = port(),
                                       .credentials_dir = credentials_dir(),
                                       .connect_timeout = std::chrono::seconds(5),
                                       .total_timeout = std::chrono::seconds(5)};
    options.attempts = 1;
    return options;
  }
  // A service account directory whose ca.crt is another CA's (TLS must fail against it).
  std::string wrong_ca_credentials_dir() const { return dir_.File("other-serviceaccount"); }

  // Requests received so far, and the Authorization header of the last one.
  int requests() const;
  std::string last_authorization() const;
  // Blocks until `count` requests have arrived (woken by the server's thread); false after 15 s.
  bool WaitForRequests(int count) const;
  // Every request so far, in arrival order.
  std::vector<Request> Log() const;
  // Blocks until `done` holds for the log (checked at each arrival); false after 15 s.
  bool WaitForLog(const std::function<bool(const std::vector<Request>&)>& done) const;

 private:
  struct Loop;
  void Handle(const std::string& method, const std::string& path, const std::string* authorization,
              const std::string* content_type, const std::string& body, Answer* answer);
  static Answer NotFound(const std::string& what);

  TempDir dir_;
  uint16_t port_ = 0;
  mutable std::mutex mutex_;
  mutable std::condition_variable arrived_;
  std::map<std::string, Answer> answers_;
  std::map<std::string, Answer> csinode_answers_;
  std::map<std::string, std::deque<Answer>> patch_answers_;
  std::vector<Request> log_;
  int requests_ = 0;
  std::string last_authorization_;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace oxide::testing
