#include "node/kubernetes_api.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "backend/curl_library.h"
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

std::unique_ptr<Exchange> Perform(const KubernetesApiOptions& options,
                                  const KubernetesRequest& request, const std::string& url,
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
  Curl().easy_setopt(e, CURLOPT_USERAGENT, "oxide-csi-plugin (node)");
  if (request.method != "GET") {
    Curl().easy_setopt(e, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    Curl().easy_setopt(e, CURLOPT_POSTFIELDS, request.body.c_str());
    Curl().easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
  }
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

std::string Kib(size_t bytes) {
  return std::to_string(bytes / 1024) + " KiB";
}

// A transfer that brought no HTTP answer, as a message for a person.
Status TransportFailure(const Exchange& exchange, const KubernetesApiOptions& options,
                        const std::string& base, const std::string& ca_file, int attempts) {
  const std::string tried = attempts > 1 ? " (" + std::to_string(attempts) + " attempts)" : "";
  if (exchange.too_large || exchange.code == CURLE_FILESIZE_EXCEEDED) {
    return FailedPrecondition("the answer is larger than " + Kib(options.max_response_bytes) +
                              ", which no Node or CSINode object is");
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
  return Unavailable("cannot reach the API server " + base + tried + ": " + CurlText(exchange));
}

}  // namespace

std::string KubernetesBaseUrl(const KubernetesApiOptions& options) {
  const bool ipv6 = options.host.find(':') != std::string::npos;
  return "https://" + (ipv6 ? "[" + options.host + "]" : options.host) + ":" + options.port;
}

std::string KubernetesStatusMessage(const std::string& body) {
  json status = json::parse(body, nullptr, false);
  if (status.is_object() && status.contains("message") && status["message"].is_string()) {
    return " (" + CutUtf8(status["message"].get<std::string>(), 300) + ")";
  }
  return "";
}

StatusOr<KubernetesResponse> CallKubernetesApi(const KubernetesApiOptions& options,
                                               const KubernetesRequest& request) {
  if (std::string error; !backend::LoadCurl(&error)) return FailedPrecondition(error);
  StatusOr<std::string> token = ReadToken(options.credentials_dir + "/token");
  if (!token.ok()) return token.status();
  log::RegisterSecret(log::SecretKind::kKubernetesToken, *token);
  const std::string ca_file = options.credentials_dir + "/ca.crt";
  if (std::ifstream ca(ca_file); !ca) {
    return FailedPrecondition("cannot read the API server's CA " + ca_file +
                              " (TLS is never skipped)");
  }
  const std::string base = KubernetesBaseUrl(options);

  curl_slist* raw = Curl().slist_append(nullptr, "Accept: application/json");
  std::string authorization = "Authorization: Bearer " + *token;
  raw = Curl().slist_append(raw, authorization.c_str());  // libcurl copies the string
  if (!request.content_type.empty()) {
    std::string content_type = "Content-Type: " + request.content_type;
    raw = Curl().slist_append(raw, content_type.c_str());
  }
  std::unique_ptr<curl_slist, ListDeleter> headers(raw);

  std::unique_ptr<Exchange> exchange;
  int attempts = 0;
  for (int attempt = 1; attempt <= std::max(1, options.attempts); ++attempt) {
    // Start-up, before the loop runs, or a worker thread: a short pause blocks no loop.
    if (attempt > 1) std::this_thread::sleep_for(options.retry_pause);
    exchange = Perform(options, request, base + request.path, ca_file, headers.get());
    attempts = attempt;
    if (!Retryable(*exchange)) break;
  }
  if (exchange->too_large || exchange->code != CURLE_OK) {
    return TransportFailure(*exchange, options, base, ca_file, attempts);
  }
  return KubernetesResponse{
      .status = exchange->http_status, .body = std::move(exchange->body), .attempts = attempts};
}

}  // namespace oxide::node
