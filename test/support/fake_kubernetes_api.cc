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
        Handle(request.method, request.raw_path, request.header("authorization"),
               request.header("content-type"), request.body, &answer);
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

FakeKubernetesApi::Answer FakeKubernetesApi::NotFound(const std::string& what) {
  return {.status = 404,
          .body = nlohmann::json{{"kind", "Status"},
                                 {"apiVersion", "v1"},
                                 {"metadata", nlohmann::json::object()},
                                 {"status", "Failure"},
                                 {"message", what + " not found"},
                                 {"reason", "NotFound"},
                                 {"code", 404}}
                      .dump(),
          .never = false};
}

void FakeKubernetesApi::Handle(const std::string& method, const std::string& path,
                               const std::string* authorization, const std::string* content_type,
                               const std::string& body, Answer* answer) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_;
  last_authorization_ = authorization != nullptr ? *authorization : "";
  log_.push_back({.method = method,
                  .path = path,
                  .content_type = content_type != nullptr ? *content_type : "",
                  .body = body});
  arrived_.notify_all();
  const std::string nodes = "/api/v1/nodes/";
  const std::string csinodes = "/apis/storage.k8s.io/v1/csinodes/";
  if (path.rfind(nodes, 0) == 0 && method == "GET") {
    auto found = answers_.find(path.substr(nodes.size()));
    *answer = found != answers_.end() ? found->second
                                      : NotFound("nodes \"" + path.substr(nodes.size()) + "\"");
  } else if (path.rfind(csinodes, 0) == 0 && method == "GET") {
    const std::string name = path.substr(csinodes.size());
    auto found = csinode_answers_.find(name);
    *answer = found != csinode_answers_.end()
                  ? found->second
                  : NotFound("csinodes.storage.k8s.io \"" + name + "\"");
  } else if (path.rfind(nodes, 0) == 0 && method == "PATCH") {
    const std::string name = path.substr(nodes.size());
    const std::string type = content_type != nullptr ? *content_type : "";
    std::deque<Answer>& queued = patch_answers_[name];
    if (type != "application/json-patch+json" && type != "application/merge-patch+json" &&
        type != "application/strategic-merge-patch+json" &&
        type != "application/apply-patch+yaml") {
      answer->status = 415;
      answer->body = nlohmann::json{
          {"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", nlohmann::json::object()},
          {"status", "Failure"},
          {"message",
           "the body of the request was in an unknown format - "
           "accepted media types include: "
           "application/json-patch+json, "
           "application/merge-patch+json, "
           "application/apply-patch+yaml"},
          {"reason", "UnsupportedMediaType"},
          {"code", 415}}.dump();
    } else if (queued.empty()) {
      answer->status = 500;
      answer->body =
          R"({"kind":"Status","status":"Failure","message":"unexpected patch","code":500})";
    } else {
      *answer = queued.front();
      queued.pop_front();
    }
    if (!answer->next_node.empty()) {
      answers_[name] = {.status = 200, .body = answer->next_node, .never = false};
    }
  } else {
    answer->status = 405;
    answer->body = R"({"kind":"Status","status":"Failure","message":"not served","code":405})";
  }
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

void FakeKubernetesApi::SetCsiNodeAnswer(const std::string& node_name, Answer answer) {
  std::lock_guard<std::mutex> lock(mutex_);
  csinode_answers_[node_name] = std::move(answer);
}

void FakeKubernetesApi::QueuePatchAnswer(const std::string& node_name, Answer answer) {
  std::lock_guard<std::mutex> lock(mutex_);
  patch_answers_[node_name].push_back(std::move(answer));
}

std::vector<FakeKubernetesApi::Request> FakeKubernetesApi::Log() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return log_;
}

bool FakeKubernetesApi::WaitForLog(
    const std::function<bool(const std::vector<Request>&)>& done) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return arrived_.wait_for(lock, std::chrono::seconds(15), [&] { return done(log_); });
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
