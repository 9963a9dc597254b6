#include "backend/curl_multi_transport.h"

#include <strings.h>

#include <algorithm>
#include <charconv>
#include <mutex>
#include <vector>

#include "util/log.h"
#include "version.h"

namespace oxide::backend {
namespace {

constexpr size_t kMaxResponseBytes = 16 * 1024 * 1024;

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

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

}  // namespace

struct CurlMultiTransport::Transfer {
  HttpRequest request;
  HttpCallback done;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string url;
  HttpResponse response;
  char error[CURL_ERROR_SIZE] = {};

  ~Transfer() {
    if (easy) curl_easy_cleanup(easy);
    if (headers) curl_slist_free_all(headers);
  }

  static size_t OnBody(char* data, size_t size, size_t count, void* self) {
    auto* t = static_cast<Transfer*>(self);
    if (t->response.body.size() + size * count > kMaxResponseBytes) return 0;  // aborts
    t->response.body.append(data, size * count);
    return size * count;
  }

  static size_t OnHeader(char* data, size_t size, size_t count, void* self) {
    auto* t = static_cast<Transfer*>(self);
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
};

struct CurlMultiTransport::SocketWatch {
  uv_poll_t poll{};
  curl_socket_t fd = CURL_SOCKET_BAD;
  CurlMultiTransport* owner = nullptr;
};

CurlMultiTransport::CurlMultiTransport(uv_loop_t* loop, TransportOptions options)
    : loop_(loop), options_(std::move(options)) {
  InitCurlOnce();
  while (!options_.base_url.empty() && options_.base_url.back() == '/')
    options_.base_url.pop_back();
  authorization_ = "Authorization: Bearer " + options_.token;
  multi_ = curl_multi_init();
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlMultiTransport::OnSocket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlMultiTransport::OnTimerChange);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, options_.max_host_connections);
  // Keep as many idle connections as we may open, so keep-alive reuse is not cut short.
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, options_.max_host_connections);
  timer_ = new uv_timer_t;
  uv_timer_init(loop_, timer_);
  timer_->data = this;
  deferred_ = new uv_timer_t;
  uv_timer_init(loop_, deferred_);
  deferred_->data = this;
}

CurlMultiTransport::~CurlMultiTransport() {
  for (Transfer* transfer : active_) {
    curl_multi_remove_handle(multi_, transfer->easy);
    delete transfer;
  }
  active_.clear();
  queue_.clear();
  failed_to_start_.clear();
  curl_multi_cleanup(multi_);  // closes cached connections (may report CURL_POLL_REMOVE)
  for (SocketWatch* watch : std::vector<SocketWatch*>(watches_.begin(), watches_.end()))
    StopWatching(watch);
  auto free_timer = [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); };
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), free_timer);
  uv_close(reinterpret_cast<uv_handle_t*>(deferred_), free_timer);
}

void CurlMultiTransport::Send(HttpRequest request, HttpCallback done) {
  auto transfer = std::make_unique<Transfer>();
  transfer->request = std::move(request);
  transfer->done = std::move(done);
  queue_.push_back(std::move(transfer));
  StartQueued();
}

void CurlMultiTransport::StartQueued() {
  while (active_.size() < options_.max_in_flight && !queue_.empty()) {
    std::unique_ptr<Transfer> transfer = std::move(queue_.front());
    queue_.pop_front();
    if (Start(transfer.get())) {
      active_.insert(transfer.release());
      max_in_flight_seen_ = std::max(max_in_flight_seen_, active_.size());
    } else {
      failed_to_start_.push_back(std::move(transfer));
      uv_timer_start(deferred_, &CurlMultiTransport::OnDeferred, 0, 0);
    }
  }
}

bool CurlMultiTransport::Start(Transfer* t) {
  t->easy = curl_easy_init();
  if (t->easy == nullptr) {
    t->response.transport_error = TransportError::kOther;
    t->response.transport_message = "libcurl could not create a transfer";
    return false;
  }
  CURL* e = t->easy;
  const HttpRequest& r = t->request;
  t->url = options_.base_url + r.target;
  const std::string user_agent = std::string("oxide-csi-plugin/") + kVersion;
  const std::string api_version = std::string("API-Version: ") + kOxideApiVersion;
  t->headers = curl_slist_append(t->headers, authorization_.c_str());
  t->headers = curl_slist_append(t->headers, api_version.c_str());
  t->headers = curl_slist_append(t->headers, "Accept: application/json");
  t->headers = curl_slist_append(t->headers, "Expect:");  // no 100-continue round trip
  if (!r.body.empty()) t->headers = curl_slist_append(t->headers, "Content-Type: application/json");
  const auto timeout = r.timeout.count() > 0 ? r.timeout : options_.default_timeout;
  bool ok = t->headers != nullptr;
  ok = ok && curl_easy_setopt(e, CURLOPT_URL, t->url.c_str()) == CURLE_OK;
  curl_easy_setopt(e, CURLOPT_PRIVATE, t);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  curl_easy_setopt(e, CURLOPT_USERAGENT, user_agent.c_str());  // libcurl copies strings
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(timeout, options_.connect_timeout).count()));
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::OnBody);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
  if (options_.insecure) {
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!options_.ca_file.empty()) {
    curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_file.c_str());
  }
  switch (r.method) {
    case HttpMethod::kGet:
      break;
    case HttpMethod::kPost:
      // libcurl silently resends a request once when a REUSED connection closes before any
      // answer byte (e.g. the server processed it, then the connection died). For a request
      // that must never be repeated, a fresh connection turns that case into an error instead.
      if (!r.idempotent) curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
      curl_easy_setopt(e, CURLOPT_POST, 1L);
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, static_cast<long>(r.body.size()));
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.c_str());  // `r` outlives the transfer
      break;
    case HttpMethod::kDelete:
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
      break;
  }
  ok = ok && curl_multi_add_handle(multi_, e) == CURLM_OK;
  if (!ok) {
    t->response.transport_error = TransportError::kOther;
    t->response.transport_message = "libcurl could not start the transfer";
  }
  return ok;
}

int CurlMultiTransport::OnSocket(CURL*, curl_socket_t fd, int what, void* self, void* watch_ptr) {
  auto* transport = static_cast<CurlMultiTransport*>(self);
  auto* watch = static_cast<SocketWatch*>(watch_ptr);
  if (what == CURL_POLL_REMOVE) {
    if (watch != nullptr) {
      curl_multi_assign(transport->multi_, fd, nullptr);
      transport->StopWatching(watch);
    }
    return 0;
  }
  if (watch == nullptr) {
    watch = new SocketWatch;
    watch->fd = fd;
    watch->owner = transport;
    if (uv_poll_init_socket(transport->loop_, &watch->poll, fd) != 0) {
      delete watch;
      log::Error("cannot watch a socket of the Oxide API client");
      return -1;
    }
    watch->poll.data = watch;
    transport->watches_.insert(watch);
    curl_multi_assign(transport->multi_, fd, watch);
  }
  int events = 0;
  if (what & CURL_POLL_IN) events |= UV_READABLE;
  if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
  uv_poll_start(&watch->poll, events, &CurlMultiTransport::OnPoll);
  return 0;
}

void CurlMultiTransport::StopWatching(SocketWatch* watch) {
  watches_.erase(watch);
  uv_poll_stop(&watch->poll);
  uv_close(reinterpret_cast<uv_handle_t*>(&watch->poll),
           [](uv_handle_t* h) { delete static_cast<SocketWatch*>(h->data); });
}

int CurlMultiTransport::OnTimerChange(CURLM*, long timeout_ms, void* self) {
  auto* transport = static_cast<CurlMultiTransport*>(self);
  if (timeout_ms < 0) {
    uv_timer_stop(transport->timer_);
  } else {
    // Zero means "as soon as possible" but not from inside this callback: the timer does that.
    uv_timer_start(transport->timer_, &CurlMultiTransport::OnTimer, timeout_ms, 0);
  }
  return 0;
}

void CurlMultiTransport::OnTimer(uv_timer_t* timer) {
  static_cast<CurlMultiTransport*>(timer->data)->Act(CURL_SOCKET_TIMEOUT, 0);
}

void CurlMultiTransport::OnPoll(uv_poll_t* poll, int status, int events) {
  auto* watch = static_cast<SocketWatch*>(poll->data);
  int flags = 0;
  if (status < 0) flags |= CURL_CSELECT_ERR;
  if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
  if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
  watch->owner->Act(watch->fd, flags);
}

void CurlMultiTransport::OnDeferred(uv_timer_t* timer) {
  auto* transport = static_cast<CurlMultiTransport*>(timer->data);
  auto failed = std::move(transport->failed_to_start_);
  transport->failed_to_start_.clear();
  for (auto& transfer : failed)
    transfer->done(std::move(transfer->response));
}

void CurlMultiTransport::Act(curl_socket_t fd, int events) {
  int running = 0;
  curl_multi_socket_action(multi_, fd, events, &running);
  FinishDoneTransfers();
}

void CurlMultiTransport::FinishDoneTransfers() {
  std::vector<std::unique_ptr<Transfer>> finished;
  int left = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    CURL* easy = message->easy_handle;
    const CURLcode result = message->data.result;  // read before remove: `message` dies then
    Transfer* t = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
    long status = 0, connects = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects);
    curl_multi_remove_handle(multi_, easy);
    active_.erase(t);
    HttpResponse& response = t->response;
    response.new_connections = connects;
    connections_opened_ += static_cast<uint64_t>(connects);
    if (result == CURLE_OK) {
      response.status = static_cast<int>(status);
    } else {
      response.status = 0;
      response.transport_error = ClassifyCurlError(result);
      response.transport_message = t->error[0] != '\0' ? t->error : curl_easy_strerror(result);
    }
    finished.emplace_back(t);
  }
  StartQueued();  // freed slots go to the oldest waiting requests first
  for (auto& transfer : finished)
    transfer->done(std::move(transfer->response));
}

}  // namespace oxide::backend
