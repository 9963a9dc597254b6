#include "node/kubernetes_node_reader.h"

#include <curl/curl.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "backend/curl_library.h"
#include "config/validation.h"
#include "util/log.h"
#include "util/utf8_cut.h"

namespace oxide::node {
namespace {

using backend::Curl;
using nlohmann::json;

constexpr size_t kLargestTokenFile = 64 * 1024;

StatusOr<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return FailedPrecondition("cannot read the service account token " + path);
  std::string token(kLargestTokenFile + 1, '\0');
  in.read(token.data(), static_cast<std::streamsize>(token.size()));
  token.resize(static_cast<size_t>(in.gcount()));
  if (token.size() > kLargestTokenFile) {
    return FailedPrecondition("the service account token " + path + " is larger than 64 KiB");
  }
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
    token.pop_back();
  }
  if (token.empty()) return FailedPrecondition("the service account token " + path + " is empty");
  return token;
}

// What one transfer brought back.
struct Exchange {
  CURLcode code = CURLE_OK;
  long http_status = 0;
  std::string body;
  size_t limit = 0;
  bool too_large = false;
  char error[CURL_ERROR_SIZE] = {};
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  size_t bytes = size * count;
  if (exchange->body.size() + bytes > exchange->limit) {
    exchange->too_large = true;
    return 0;  // libcurl ends the transfer with CURLE_WRITE_ERROR
  }
  exchange->body.append(data, bytes);
  return bytes;
}

// libcurl's progress callback: non-zero ends the transfer (CURLE_ABORTED_BY_CALLBACK).
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(user)->load() ? 1 : 0;
}

struct EasyDeleter {
  void operator()(CURL* easy) const { Curl().easy_cleanup(easy); }
};
struct ListDeleter {
  void operator()(curl_slist* list) const { Curl().slist_free_all(list); }
};

std::unique_ptr<Exchange> Perform(const KubernetesApiOptions& options, const std::string& url,
                                  const std::string& ca_file, curl_slist* headers) {
  auto exchange = std::make_unique<Exchange>();
  exchange->limit = options.max_response_bytes;
  std::unique_ptr<CURL, EasyDeleter> easy(Curl().easy_init());
  if (!easy) {
    exchange->code = CURLE_OUT_OF_MEMORY;
    return exchange;
  }
  CURL* e = easy.get();
  Curl().easy_setopt(e, CURLOPT_URL, url.c_str());
  Curl().easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  Curl().easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
  Curl().easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
  Curl().easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
  Curl().easy_setopt(e, CURLOPT_CAINFO, ca_file.c_str());
  Curl().easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  Curl().easy_setopt(e, CURLOPT_USERAGENT, "oxide-csi-plugin (node identity)");
  Curl().easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options.connect_timeout.count()));
  Curl().easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options.total_timeout.count()));
  Curl().easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
                     static_cast<curl_off_t>(options.max_response_bytes));
  Curl().easy_setopt(e, CURLOPT_WRITEFUNCTION, &OnBody);
  Curl().easy_setopt(e, CURLOPT_WRITEDATA, exchange.get());
  Curl().easy_setopt(e, CURLOPT_ERRORBUFFER, exchange->error);
  if (options.cancel != nullptr) {
    Curl().easy_setopt(e, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    Curl().easy_setopt(e, CURLOPT_XFERINFODATA, options.cancel);
    Curl().easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  }
  exchange->code = Curl().easy_perform(e);
  Curl().easy_getinfo(e, CURLINFO_RESPONSE_CODE, &exchange->http_status);
  return exchange;
}

bool Retryable(const Exchange& exchange) {
  if (exchange.code == CURLE_COULDNT_CONNECT) return true;
  return exchange.code == CURLE_OK && exchange.http_status >= 500;
}

bool IsTlsFailure(CURLcode code) {
  return code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CONNECT_ERROR ||
         code == CURLE_SSL_CACERT_BADFILE || code == CURLE_SSL_CERTPROBLEM ||
         code == CURLE_SSL_ISSUER_ERROR;
}

std::string CurlText(const Exchange& exchange) {
  std::string text = Curl().easy_strerror(exchange.code);
  if (exchange.error[0] != '\0') text += ": " + std::string(exchange.error);
  return text;
}

// The "message" of a Kubernetes Status object in an error answer, when there is one.
std::string ServerMessage(const std::string& body) {
  json status = json::parse(body, nullptr, false);
  if (status.is_object() && status.contains("message") && status["message"].is_string()) {
    return " (" + CutUtf8(status["message"].get<std::string>(), 300) + ")";
  }
  return "";
}

std::string Kib(size_t bytes) {
  return std::to_string(bytes / 1024) + " KiB";
}

// The outcome of the last exchange, as a message for a person.
Status Describe(const Exchange& exchange, const KubernetesApiOptions& options,
                const std::string& base, const std::string& ca_file, const std::string& node_name,
                int attempts) {
  const std::string tried = attempts > 1 ? " (" + std::to_string(attempts) + " attempts)" : "";
  if (exchange.too_large || exchange.code == CURLE_FILESIZE_EXCEEDED) {
    return FailedPrecondition("the answer is larger than " + Kib(options.max_response_bytes) +
                              ", which no Node object is");
  }
  if (exchange.code == CURLE_ABORTED_BY_CALLBACK) {
    return Status(StatusCode::kCancelled, "cancelled (the plugin is stopping)");
  }
  if (exchange.code == CURLE_OPERATION_TIMEDOUT) {
    return Unavailable("no answer from " + base + " within the time limit (" +
                       std::to_string(options.total_timeout.count()) +
                       " ms; --kubernetes-timeout-seconds): " + CurlText(exchange));
  }
  if (IsTlsFailure(exchange.code)) {
    return Unavailable("TLS with the API server " + base + " failed, verified against " + ca_file +
                       ": " + CurlText(exchange));
  }
  if (exchange.code != CURLE_OK) {
    return Unavailable("cannot reach the API server " + base + tried + ": " + CurlText(exchange));
  }
  const std::string http = "HTTP " + std::to_string(exchange.http_status);
  switch (exchange.http_status) {
    case 200:
      return Status::Ok();
    case 401:
      return Status(StatusCode::kPermissionDenied,
                    http + ": the API server refused the service account token in " +
                        options.credentials_dir + "/token" + ServerMessage(exchange.body));
    case 403:
      return Status(StatusCode::kPermissionDenied,
                    http +
                        ": the node plugin's service account may not read Node objects; grant it "
                        "RBAC \"get\" "
                        "on \"nodes\" (a ClusterRole bound to the service account)" +
                        ServerMessage(exchange.body));
    case 404:
      return NotFound(http + ": there is no Node named " + node_name +
                      "; NODE_NAME must be this node's name (downward API spec.nodeName)");
    default:
      return Unavailable(http + tried + ServerMessage(exchange.body));
  }
}

StatusOr<KubernetesNode> ParseNode(const std::string& body) {
  json node = json::parse(body, nullptr, false);
  if (node.is_discarded() || !node.is_object()) {
    return FailedPrecondition("the answer is not JSON: not a Node object");
  }
  if (node.contains("kind") && node["kind"] != "Node") {
    return FailedPrecondition("the answer is not a Node object (kind " +
                              CutUtf8(node["kind"].dump(), 64) + ")");
  }
  KubernetesNode result;
  if (!node.contains("spec")) return result;
  const json& spec = node["spec"];
  if (!spec.is_object()) return FailedPrecondition("the Node's spec is not an object");
  if (spec.contains("taints") && !spec["taints"].is_null()) {
    if (!spec["taints"].is_array())
      return FailedPrecondition("the Node's spec.taints is not a list");
    for (const json& taint : spec["taints"]) {
      if (taint.is_object() && taint.contains("key") && taint["key"] == kUninitializedTaint) {
        result.uninitialized = true;
      }
    }
  }
  if (!spec.contains("providerID") || spec["providerID"].is_null()) return result;
  if (!spec["providerID"].is_string()) {
    return FailedPrecondition("the Node's spec.providerID is not a string");
  }
  result.provider_id = spec["providerID"].get<std::string>();
  return result;
}

}  // namespace

StatusOr<KubernetesNode> ReadKubernetesNode(const KubernetesApiOptions& options,
                                            const std::string& node_name) {
  const std::string path = "/api/v1/nodes/" + node_name;
  auto failed = [&path](const Status& status) {
    return Status(status.code(), "GET " + path + ": " + status.message());
  };
  if (!IsKubernetesNodeName(node_name)) {
    return InvalidArgument("\"" + CutUtf8(node_name, 128) + "\" is not a Kubernetes node name");
  }
  if (std::string error; !backend::LoadCurl(&error)) return failed(FailedPrecondition(error));
  StatusOr<std::string> token = ReadToken(options.credentials_dir + "/token");
  if (!token.ok()) return failed(token.status());
  log::RegisterSecret(*token);
  const std::string ca_file = options.credentials_dir + "/ca.crt";
  if (std::ifstream ca(ca_file); !ca) {
    return failed(FailedPrecondition("cannot read the API server's CA " + ca_file +
                                     " (TLS is never skipped)"));
  }
  const bool ipv6 = options.host.find(':') != std::string::npos;
  const std::string base =
      "https://" + (ipv6 ? "[" + options.host + "]" : options.host) + ":" + options.port;

  curl_slist* raw = Curl().slist_append(nullptr, "Accept: application/json");
  std::string authorization = "Authorization: Bearer " + *token;
  raw = Curl().slist_append(raw, authorization.c_str());  // libcurl copies the string
  std::unique_ptr<curl_slist, ListDeleter> headers(raw);

  std::unique_ptr<Exchange> exchange;
  int attempts = 0;
  for (int attempt = 1; attempt <= std::max(1, options.attempts); ++attempt) {
    // Start-up only, before the loop runs: a short pause between attempts blocks nothing else.
    if (attempt > 1) std::this_thread::sleep_for(options.retry_pause);
    exchange = Perform(options, base + path, ca_file, headers.get());
    attempts = attempt;
    if (!Retryable(*exchange)) break;
  }
  Status outcome = Describe(*exchange, options, base, ca_file, node_name, attempts);
  if (!outcome.ok()) return failed(outcome);
  StatusOr<KubernetesNode> node = ParseNode(exchange->body);
  if (!node.ok()) return failed(node.status());
  return node;
}

}  // namespace oxide::node
