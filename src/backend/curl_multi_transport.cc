#include "backend/curl_multi_transport.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/curl_library.h"
#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::backend {
namespace {

// Loads and initialises libcurl once, before the first handle of any transport. The plugin
// checks LoadCurl() at start, so a failure here is a programming error.
void InitCurlOnce() {
  std::string error;
  if (!LoadCurl(&error)) {
    log::Error("cannot make an Oxide transport: " + error);
    std::abort();
  }
}

}  // namespace

struct CurlMultiTransport::SocketWatch {
  uv_poll_t poll{};
  curl_socket_t fd = CURL_SOCKET_BAD;
  CurlMultiTransport* owner = nullptr;
  int events = 0;       // what `poll` waits for now; 0 = stopped
  bool wanted = false;  // curl waits for `events` (false: an idle connection in curl's pool)
};

CurlMultiTransport::CurlMultiTransport(uv_loop_t* loop, TransportOptions options,
                                       const ApiToken* token)
    : loop_(loop),
      options_(std::move(options)),
      own_token_(token == nullptr ? std::make_unique<ApiToken>(options_.token) : nullptr),
      token_(token == nullptr ? own_token_.get() : token) {
  InitCurlOnce();
  headers_ = std::make_shared<const CurlHeaders>(token_->value(), token_->generation());
  while (!options_.base_url.empty() && options_.base_url.back() == '/')
    options_.base_url.pop_back();
  if (options_.max_host_connections > 0) {
    options_.max_in_flight =
        std::min(options_.max_in_flight, static_cast<size_t>(options_.max_host_connections));
  }
  multi_ = Curl().multi_init();
  Curl().multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlMultiTransport::OnSocket);
  Curl().multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  Curl().multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlMultiTransport::OnTimerChange);
  Curl().multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  Curl().multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, options_.max_host_connections);
  // Keep as many idle connections as we may open, so keep-alive reuse is not cut short.
  Curl().multi_setopt(multi_, CURLMOPT_MAXCONNECTS, options_.max_host_connections);
  timer_ = new uv_timer_t;
  uv_timer_init(loop_, timer_);
  timer_->data = this;
  deferred_ = new uv_timer_t;
  uv_timer_init(loop_, deferred_);
  deferred_->data = this;
}

CurlMultiTransport::~CurlMultiTransport() {
  for (CurlTransfer* transfer : active_) {
    Curl().multi_remove_handle(multi_, transfer->easy);
    delete transfer;
  }
  active_.clear();
  queue_.clear();
  failed_to_start_.clear();
  for (CURL* easy : idle_easy_)
    Curl().easy_cleanup(easy);
  idle_easy_.clear();
  Curl().multi_cleanup(multi_);  // closes cached connections through OnCloseSocket
  std::vector<SocketWatch*> left;
  for (const auto& [fd, watch] : watches_)
    left.push_back(watch);
  for (SocketWatch* watch : left)
    StopWatching(watch);
  auto free_timer = [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); };
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), free_timer);
  uv_close(reinterpret_cast<uv_handle_t*>(deferred_), free_timer);
}

size_t CurlMultiTransport::idle_connections_armed() const {
  return static_cast<size_t>(std::count_if(watches_.begin(), watches_.end(), [](const auto& entry) {
    return !entry.second->wanted && entry.second->events != 0;
  }));
}

void CurlMultiTransport::RecordAttempt(const HttpRequest& request, const HttpResponse& response,
                                       double seconds) {
  metrics::Families()
      .oxide_request_duration.With({request.operation, OutcomeLabel(response)})
      .Observe(seconds);
}

void CurlMultiTransport::Send(HttpRequest request, HttpCallback done) {
  queue_.push_back({std::move(request), std::move(done)});
  StartQueued();
  metrics::Families().oxide_requests_queued.Set(static_cast<double>(queue_.size()));
}

void CurlMultiTransport::StartQueued() {
  while (active_.size() < options_.max_in_flight && !queue_.empty()) {
    auto transfer = std::make_unique<CurlTransfer>();
    transfer->request = std::move(queue_.front().request);
    transfer->done = std::move(queue_.front().done);
    queue_.pop_front();
    CURL* reuse = nullptr;
    if (!idle_easy_.empty()) {
      reuse = idle_easy_.back();
      idle_easy_.pop_back();
    }
    if (headers_->token_generation() != token_->generation())
      headers_ = std::make_shared<const CurlHeaders>(token_->value(), token_->generation());
    bool started = transfer->Prepare(options_, headers_, reuse);
    if (started && reuse == nullptr) {
      Curl().easy_setopt(transfer->easy, CURLOPT_OPENSOCKETFUNCTION, &OnOpenSocket);
      Curl().easy_setopt(transfer->easy, CURLOPT_OPENSOCKETDATA, this);
      Curl().easy_setopt(transfer->easy, CURLOPT_CLOSESOCKETFUNCTION, &OnCloseSocket);
      Curl().easy_setopt(transfer->easy, CURLOPT_CLOSESOCKETDATA, this);
    }
    if (started && Curl().multi_add_handle(multi_, transfer->easy) != CURLM_OK) {
      started = false;
      transfer->response.transport_error = TransportError::kOther;
      transfer->response.transport_message = "libcurl could not start the transfer";
    }
    if (started) {
      active_.insert(transfer.release());
      max_in_flight_seen_ = std::max(max_in_flight_seen_, active_.size());
    } else {
      failed_to_start_.push_back(std::move(transfer));
      uv_timer_start(deferred_, &CurlMultiTransport::OnDeferred, 0, 0);
    }
  }
}

int CurlMultiTransport::OnSocket(CURL*, curl_socket_t fd, int what, void* self, void*) {
  auto* transport = static_cast<CurlMultiTransport*>(self);
  auto found = transport->watches_.find(fd);
  SocketWatch* watch = found == transport->watches_.end() ? nullptr : found->second;
  if (what == CURL_POLL_REMOVE) {
    if (watch == nullptr) return 0;
    watch->wanted = false;
    if (!transport->connection_sockets_.contains(fd)) {
      transport->StopWatching(watch);  // we would not hear of its closing: let it go now
    } else if (watch->events != UV_READABLE) {
      transport->Arm(watch, 0);
    }  // else an idle connection stays armed for reading until OnCloseSocket (see OnPoll)
    return 0;
  }
  if (watch == nullptr && (watch = transport->WatchFor(fd)) == nullptr) return -1;
  int events = 0;
  if (what & CURL_POLL_IN) events |= UV_READABLE;
  if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
  watch->wanted = true;
  transport->Arm(watch, events);
  return 0;
}

curl_socket_t CurlMultiTransport::OnOpenSocket(void* self, curlsocktype, curl_sockaddr* address) {
  auto* transport = static_cast<CurlMultiTransport*>(self);
  const curl_socket_t fd =
      socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  if (fd == CURL_SOCKET_BAD) return fd;
  // A watch still filed under this number belongs to a socket closed behind our back: libuv
  // would take it for this socket's registration, so it goes first.
  auto stale = transport->watches_.find(fd);
  if (stale != transport->watches_.end()) transport->StopWatching(stale->second);
  transport->connection_sockets_.insert(fd);
  return fd;
}

int CurlMultiTransport::OnCloseSocket(void* self, curl_socket_t fd) {
  auto* transport = static_cast<CurlMultiTransport*>(self);
  transport->connection_sockets_.erase(fd);
  auto found = transport->watches_.find(fd);
  if (found != transport->watches_.end()) transport->StopWatching(found->second);
  return close(fd);
}

CurlMultiTransport::SocketWatch* CurlMultiTransport::WatchFor(curl_socket_t fd) {
  auto watch = std::make_unique<SocketWatch>();
  watch->fd = fd;
  watch->owner = this;
  if (uv_poll_init_socket(loop_, &watch->poll, fd) != 0) {
    log::Error("cannot watch a socket of the Oxide API client");
    return nullptr;
  }
  watch->poll.data = watch.get();
  watches_.emplace(fd, watch.get());
  return watch.release();
}

// uv_poll_start always removes the socket from epoll and adds it again, so it is only called
// when the events change.
void CurlMultiTransport::Arm(SocketWatch* watch, int events) {
  if (events == watch->events) return;
  if (events == 0) {
    uv_poll_stop(&watch->poll);
  } else {
    uv_poll_start(&watch->poll, events, &CurlMultiTransport::OnPoll);
  }
  watch->events = events;
}

void CurlMultiTransport::StopWatching(SocketWatch* watch) {
  watches_.erase(watch->fd);
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
  if (!watch->wanted) {
    // An idle connection turned readable: the server closed it. curl notices when it next
    // looks at the connection; until then there is nothing to wake up for.
    watch->owner->Arm(watch, 0);
    return;
  }
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
  for (auto& transfer : failed) {
    RecordAttempt(transfer->request, transfer->response, 0);
    transfer->done(std::move(transfer->response));
  }
}

void CurlMultiTransport::Act(curl_socket_t fd, int events) {
  int running = 0;
  Curl().multi_socket_action(multi_, fd, events, &running);
  FinishDoneTransfers();
}

void CurlMultiTransport::FinishDoneTransfers() {
  std::vector<std::unique_ptr<CurlTransfer>> finished;
  int left = 0;
  while (CURLMsg* message = Curl().multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    CURL* easy = message->easy_handle;
    const CURLcode result = message->data.result;  // read before remove: `message` dies then
    CurlTransfer* t = nullptr;
    Curl().easy_getinfo(easy, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
    t->Finish(result);
    curl_off_t total_us = 0;
    Curl().easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total_us);
    RecordAttempt(t->request, t->response, static_cast<double>(total_us) / 1e6);
    Curl().multi_remove_handle(multi_, easy);
    active_.erase(t);
    connections_opened_ += static_cast<uint64_t>(t->response.new_connections);
    if (idle_easy_.size() < options_.max_in_flight) idle_easy_.push_back(t->TakeEasy());
    finished.emplace_back(t);
  }
  StartQueued();  // freed slots go to the oldest waiting requests first
  metrics::Families().oxide_requests_queued.Set(static_cast<double>(queue_.size()));
  for (auto& transfer : finished)
    transfer->done(std::move(transfer->response));
}

}  // namespace oxide::backend
