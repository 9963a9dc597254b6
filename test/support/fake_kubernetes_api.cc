#include "support/fake_kubernetes_api.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "http_server.h"

namespace oxide::testing {
namespace {

// A self-signed certificate for 127.0.0.1 (it is its own CA) in `dir`: cert.pem and key.pem.
void MakeCertificate(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string command =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 -keyout " +
      dir + "/key.pem -out " + dir + "/cert.pem >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

void MakeServiceAccount(const std::string& dir, const std::string& ca_file) {
  std::filesystem::create_directories(dir);
  WriteFile(dir + "/token", std::string(FakeKubernetesApi::kToken) + "\n");
  std::filesystem::copy_file(ca_file, dir + "/ca.crt");
}

}  // namespace

struct FakeKubernetesApi::Loop {
  uv_loop_t uv{};
  uv_async_t stop{};
  std::unique_ptr<oxide_sim::HttpServer> server;
};

FakeKubernetesApi::FakeKubernetesApi() : loop_(std::make_unique<Loop>()) {
  MakeCertificate(dir_.File("server"));
  MakeCertificate(dir_.File("other-ca"));
  MakeServiceAccount(credentials_dir(), dir_.File("server/cert.pem"));
  MakeServiceAccount(wrong_ca_credentials_dir(), dir_.File("other-ca/cert.pem"));

  uv_loop_init(&loop_->uv);
  loop_->stop.data = loop_.get();
  uv_async_init(&loop_->uv, &loop_->stop, [](uv_async_t* async) {
    auto* loop = static_cast<Loop*>(async->data);
    loop->server->stop();
    uv_close(reinterpret_cast<uv_handle_t*>(async), nullptr);
  });
  loop_->server = std::make_unique<oxide_sim::HttpServer>(&loop_->uv);
  oxide_sim::HttpServer::Options options;
  options.tls_cert_pem = ReadFile(dir_.File("server/cert.pem"));
  options.tls_key_pem = ReadFile(dir_.File("server/key.pem"));
  std::string error;
  // Started before the thread runs the loop; from then on only that thread touches the server.
  bool started = loop_->server->start(
      options,
      [this](oxide_sim::HttpRequest&& request, oxide_sim::Responder responder) {
        Answer answer;
        Handle(request.raw_path, request.header("authorization"), &answer);
        if (answer.never) return;  // the exchange stays suspended until stop()
        oxide_sim::HttpResponse response;
        response.status = answer.status;
        response.body = answer.body;
        response.headers.push_back({"Content-Type", "application/json"});
        responder.send(std::move(response));
      },
      &error);
  EXPECT_TRUE(started) << error;
  port_ = loop_->server->port();
  thread_ = std::thread([loop = loop_.get()] { uv_run(&loop->uv, UV_RUN_DEFAULT); });
}

FakeKubernetesApi::~FakeKubernetesApi() {
  uv_async_send(&loop_->stop);
  thread_.join();
  loop_->server.reset();
  uv_run(&loop_->uv, UV_RUN_NOWAIT);
  uv_loop_close(&loop_->uv);
}

void FakeKubernetesApi::Handle(const std::string& path, const std::string* authorization,
                               Answer* answer) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_;
  last_authorization_ = authorization != nullptr ? *authorization : "";
  const std::string prefix = "/api/v1/nodes/";
  auto found =
      path.rfind(prefix, 0) == 0 ? answers_.find(path.substr(prefix.size())) : answers_.end();
  if (found != answers_.end()) {
    *answer = found->second;
  } else {
    answer->status = 404;
    answer->body = nlohmann::json{
        {"kind", "Status"},
        {"status", "Failure"},
        {"message", "nodes \"" + path + "\" not found"},
        {"code", 404}}.dump();
  }
  arrived_.notify_all();
}

void FakeKubernetesApi::SetAnswer(const std::string& node_name, Answer answer) {
  std::lock_guard<std::mutex> lock(mutex_);
  answers_[node_name] = std::move(answer);
}

std::string FakeKubernetesApi::NodeJson(const std::string& name, const std::string& provider_id,
                                        bool uninitialized, const std::string& taint_effect) {
  nlohmann::json node = {
      {"kind", "Node"},
      {"apiVersion", "v1"},
      {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/os", "linux"}}}}},
      {"spec", nlohmann::json::object()},
      {"status", {{"nodeInfo", {{"kubeletVersion", "v1.31.0"}}}}}};
  if (!provider_id.empty()) node["spec"]["providerID"] = provider_id;
  if (uninitialized) {
    node["spec"]["taints"] =
        nlohmann::json::array({{{"key", "node.kubernetes.io/not-ready"}, {"effect", "NoSchedule"}},
                               {{"key", "node.cloudprovider.kubernetes.io/uninitialized"},
                                {"value", "true"},
                                {"effect", taint_effect}}});
  }
  return node.dump();
}

int FakeKubernetesApi::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

std::string FakeKubernetesApi::last_authorization() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_authorization_;
}

bool FakeKubernetesApi::WaitForRequests(int count) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return arrived_.wait_for(lock, std::chrono::seconds(15), [&] { return requests_ >= count; });
}

}  // namespace oxide::testing
