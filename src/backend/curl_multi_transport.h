// HttpTransport on ONE libcurl multi handle driven by the libuv loop (curl's multi-uv pattern):
// a uv_poll_t per socket curl asks about, one uv_timer_t for curl's timeout, a cap on transfers
// in flight with a FIFO queue behind it, keep-alive reuse. Finished easy handles are reset and
// kept (at most max_in_flight) for the next transfers instead of being re-created. A connection's
// uv_poll_t lives as long as the connection, and stays armed for reading while the connection
// idles in curl's pool, so reusing it costs no epoll_ctl. The Authorization header comes from an
// ApiToken: when its generation moves, the next transfer to start builds new header lists (the
// transfers under way keep theirs), so a request costs one integer compare for it. Loop thread
// only; nothing blocks.
#pragma once

#include <curl/curl.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/api_token.h"
#include "backend/curl_transfer.h"
#include "backend/http_types.h"

namespace oxide::backend {

class CurlMultiTransport : public HttpTransport {
 public:
  // Sends `token` (which must outlive the transport) as it is when each transfer starts; without
  // one, options.token, fixed.
  CurlMultiTransport(uv_loop_t* loop, TransportOptions options, const ApiToken* token = nullptr);
  // Aborts every transfer and drops its callback uncalled. The loop must run afterwards so that
  // the uv handles' close callbacks free them.
  ~CurlMultiTransport() override;
  CurlMultiTransport(const CurlMultiTransport&) = delete;
  CurlMultiTransport& operator=(const CurlMultiTransport&) = delete;

  void Send(HttpRequest request, HttpCallback done) override;

  size_t in_flight() const { return active_.size(); }
  size_t queued() const { return queue_.size(); }
  // Requests whose callback has not run yet: in flight, queued, or failed to start.
  size_t unanswered() const { return active_.size() + queue_.size() + failed_to_start_.size(); }
  size_t max_in_flight_seen() const { return max_in_flight_seen_; }
  // Connections libcurl has opened so far (reused keep-alive connections are not counted).
  uint64_t connections_opened() const { return connections_opened_; }
  // Idle keep-alive connections whose socket is still watched (for the server closing it).
  size_t idle_connections_armed() const;

 private:
  struct SocketWatch;

  static int OnSocket(CURL* easy, curl_socket_t fd, int what, void* self, void* watch);
  static curl_socket_t OnOpenSocket(void* self, curlsocktype purpose, curl_sockaddr* address);
  static int OnCloseSocket(void* self, curl_socket_t fd);
  static int OnTimerChange(CURLM* multi, long timeout_ms, void* self);
  static void OnTimer(uv_timer_t* timer);
  static void OnPoll(uv_poll_t* poll, int status, int events);
  static void OnDeferred(uv_timer_t* timer);

  void StartQueued();
  // One sample of oxide_csi_oxide_request_duration_seconds; `seconds` is libcurl's total time.
  static void RecordAttempt(const HttpRequest& request, const HttpResponse& response,
                            double seconds);
  void Act(curl_socket_t fd, int events);
  void FinishDoneTransfers();
  SocketWatch* WatchFor(curl_socket_t fd);
  void Arm(SocketWatch* watch, int events);
  void StopWatching(SocketWatch* watch);

  uv_loop_t* loop_;
  TransportOptions options_;
  CURLM* multi_ = nullptr;
  std::unique_ptr<ApiToken> own_token_;  // when none was given
  const ApiToken* token_;
  std::shared_ptr<const CurlHeaders> headers_;  // for token_'s current generation
  std::vector<CURL*> idle_easy_;                // reset handles for the next transfers; owned
  uv_timer_t* timer_ = nullptr;                 // curl's one timeout timer; heap: freed when closed
  uv_timer_t* deferred_ = nullptr;  // answers requests that could not start, never inline
  std::unordered_map<curl_socket_t, SocketWatch*> watches_;  // by socket; owned
  std::unordered_set<curl_socket_t> connection_sockets_;     // opened by OnOpenSocket, still open
  std::unordered_set<CurlTransfer*> active_;                 // owned
  struct Waiting {
    HttpRequest request;
    HttpCallback done;
  };
  std::deque<Waiting> queue_;  // no CurlTransfer (buffers, error text) until it starts
  std::deque<std::unique_ptr<CurlTransfer>> failed_to_start_;  // answered from the timer
  size_t max_in_flight_seen_ = 0;
  uint64_t connections_opened_ = 0;
};

}  // namespace oxide::backend
