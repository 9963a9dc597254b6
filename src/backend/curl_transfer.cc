#include "backend/curl_transfer.h"

#include <strings.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

#include "backend/curl_library.h"
#include "version.h"

namespace oxide::backend {
namespace {

constexpr size_t kMaxResponseBytes = 16 * 1024 * 1024;

TransportError ClassifyCurlError(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return TransportError::kTimeout;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return TransportError::kConnect;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
      return TransportError::kTls;
    default:
      return TransportError::kOther;
  }
}

// "Retry-After: 3" → 3 s. The HTTP-date form is ignored (Oxide does not send it).
std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
    value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
    value.remove_suffix(1);
  long long seconds = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (error != std::errc() || end != value.data() + value.size() || seconds < 0)
    return std::nullopt;
  return std::chrono::seconds(seconds);
}

// The value of header `name` in `line` ("Name: value\r\n"), if the line is that header.
std::optional<std::string_view> HeaderValue(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':' ||
      strncasecmp(line.data(), name.data(), name.size()) != 0)
    return std::nullopt;
  return line.substr(name.size() + 1);
}

size_t OnBody(char* data, size_t size, size_t count, void* self) {
  auto* t = static_cast<CurlTransfer*>(self);
  if (t->response.body.size() + size * count > kMaxResponseBytes) return 0;  // aborts
  t->response.body.append(data, size * count);
  return size * count;
}

size_t OnHeader(char* data, size_t size, size_t count, void* self) {
  auto* t = static_cast<CurlTransfer*>(self);
  const std::string_view line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (e.g. after 100 Continue)
    t->response.request_id.clear();
    t->response.retry_after.reset();
  } else if (auto id = HeaderValue(line, "x-request-id")) {
    std::string value(*id);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\r\n") + 1);
    t->response.request_id = std::move(value);
  } else if (auto after = HeaderValue(line, "retry-after")) {
    t->response.retry_after = ParseRetryAfter(*after);
  }
  return size * count;
}

// libcurl runs this before every send of a request, including the one resend it makes by itself
// when a REUSED connection closes before any answer byte (the server may have processed the
// request, then the connection died). A request that must never be repeated aborts there.
int OnPrerequest(void* self, char*, char*, int, int) {
  auto* t = static_cast<CurlTransfer*>(self);
  return t->sends++ == 0 ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT;
}

}  // namespace

CurlHeaders::CurlHeaders(const std::string& token, uint64_t token_generation)
    : user_agent_(std::string("oxide-csi-plugin/") + kVersion),
      token_generation_(token_generation) {
  const std::string authorization = "Authorization: Bearer " + token;
  const std::string api_version = std::string("API-Version: ") + kOxideApiVersion;
  for (curl_slist** list : {&without_body_, &with_body_}) {
    *list = Curl().slist_append(*list, authorization.c_str());
    *list = Curl().slist_append(*list, api_version.c_str());
    *list = Curl().slist_append(*list, "Accept: application/json");
    *list = Curl().slist_append(*list, "Expect:");  // no 100-continue round trip
  }
  with_body_ = Curl().slist_append(with_body_, "Content-Type: application/json");
}

CurlHeaders::~CurlHeaders() {
  Curl().slist_free_all(without_body_);
  Curl().slist_free_all(with_body_);
}

CurlTransfer::~CurlTransfer() {
  if (easy) Curl().easy_cleanup(easy);
}

CURL* CurlTransfer::TakeEasy() {
  return std::exchange(easy, nullptr);
}

namespace {

// Options that are the same for every transfer of a transport: set once per easy handle.
void SetFixedOptions(CURL* e, const TransportOptions& options, const CurlHeaders& headers) {
  Curl().easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  Curl().easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  Curl().easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  Curl().easy_setopt(e, CURLOPT_USERAGENT, headers.user_agent().c_str());  // libcurl copies it
  Curl().easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  Curl().easy_setopt(e, CURLOPT_WRITEFUNCTION, &OnBody);
  Curl().easy_setopt(e, CURLOPT_HEADERFUNCTION, &OnHeader);
  if (options.insecure) {
    Curl().easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    Curl().easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!options.ca_file.empty()) {
    Curl().easy_setopt(e, CURLOPT_CAINFO, options.ca_file.c_str());
  }
}

}  // namespace

bool CurlTransfer::Prepare(const TransportOptions& options,
                           std::shared_ptr<const CurlHeaders> lists, CURL* reuse) {
  headers = std::move(lists);
  response.token_generation = headers->token_generation();
  easy = reuse != nullptr ? reuse : Curl().easy_init();
  if (easy == nullptr) {
    response.transport_error = TransportError::kOther;
    response.transport_message = "libcurl could not create a transfer";
    return false;
  }
  CURL* e = easy;
  if (reuse == nullptr) SetFixedOptions(e, options, *headers);
  // Every option below is set for each transfer, so none is left over from the handle's last one.
  const HttpRequest& r = request;
  url = options.base_url + r.target;
  curl_slist* header_list = r.body.empty() ? headers->without_body() : headers->with_body();
  const auto timeout = r.timeout.count() > 0 ? r.timeout : options.default_timeout;
  bool ok = header_list != nullptr;
  ok = ok && Curl().easy_setopt(e, CURLOPT_URL, url.c_str()) == CURLE_OK;
  Curl().easy_setopt(e, CURLOPT_PRIVATE, this);
  Curl().easy_setopt(e, CURLOPT_HTTPHEADER, header_list);
  Curl().easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  Curl().easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(std::min(timeout, options.connect_timeout).count()));
  Curl().easy_setopt(e, CURLOPT_ERRORBUFFER, error);
  Curl().easy_setopt(e, CURLOPT_WRITEDATA, this);
  Curl().easy_setopt(e, CURLOPT_HEADERDATA, this);
  const bool guard_resend = r.method == HttpMethod::kPost && !r.idempotent;
  Curl().easy_setopt(e, CURLOPT_PREREQFUNCTION, guard_resend ? &OnPrerequest : nullptr);
  Curl().easy_setopt(e, CURLOPT_PREREQDATA, this);
  switch (r.method) {
    case HttpMethod::kPost:
      Curl().easy_setopt(e, CURLOPT_CUSTOMREQUEST, nullptr);
      Curl().easy_setopt(e, CURLOPT_POSTFIELDSIZE, static_cast<long>(r.body.size()));
      Curl().easy_setopt(e, CURLOPT_POSTFIELDS, r.body.c_str());  // `r` outlives the transfer
      break;
    case HttpMethod::kGet:
    case HttpMethod::kDelete:
      Curl().easy_setopt(e, CURLOPT_POSTFIELDS, nullptr);  // (this one also makes the method POST)
      Curl().easy_setopt(e, CURLOPT_HTTPGET, 1L);
      Curl().easy_setopt(e, CURLOPT_CUSTOMREQUEST,
                         r.method == HttpMethod::kDelete ? "DELETE" : nullptr);
      break;
  }
  if (!ok) {
    response.transport_error = TransportError::kOther;
    response.transport_message = "libcurl could not set up the transfer";
  }
  return ok;
}

void CurlTransfer::Finish(CURLcode result) {
  long status = 0, connects = 0;
  Curl().easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  Curl().easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects);
  response.new_connections = connects;
  if (result == CURLE_OK) {
    response.status = static_cast<int>(status);
    return;
  }
  response.status = 0;
  if (result == CURLE_ABORTED_BY_CALLBACK && sends > 1) {
    response.transport_error = TransportError::kConnect;
    response.transport_message =
        "the connection closed before Oxide answered; the request was not resent, as it must "
        "not be repeated (Oxide may have processed it)";
    return;
  }
  response.transport_error = ClassifyCurlError(result);
  response.transport_message = error[0] != '\0' ? error : Curl().easy_strerror(result);
}

}  // namespace oxide::backend
