// An HttpTransport that repeats failed idempotent requests on another transport after a
// RetryPolicy delay, waiting on uv timers (never sleeping). Loop thread only.
#pragma once

#include <uv.h>

#include <memory>
#include <unordered_set>

#include "backend/http_types.h"
#include "backend/retry_policy.h"

namespace oxide::backend {

class RetryingTransport : public HttpTransport {
 public:
  RetryingTransport(uv_loop_t* loop, std::unique_ptr<HttpTransport> inner, RetryOptions options);
  // Drops pending retries (their callbacks uncalled); the loop must run afterwards so the
  // timers' close callbacks free them.
  ~RetryingTransport() override;
  RetryingTransport(const RetryingTransport&) = delete;
  RetryingTransport& operator=(const RetryingTransport&) = delete;

  void Send(HttpRequest request, HttpCallback done) override;

  HttpTransport& inner() { return *inner_; }
  uint64_t retries() const { return retries_; }

 private:
  struct Attempt;
  void Try(std::shared_ptr<Attempt> attempt);
  void OnAnswer(std::shared_ptr<Attempt> attempt, HttpResponse response);
  static void OnTimer(uv_timer_t* timer);

  uv_loop_t* loop_;
  std::unique_ptr<HttpTransport> inner_;
  RetryPolicy policy_;
  std::unordered_set<uv_timer_t*> waiting_;  // timers of pending retries
  uint64_t retries_ = 0;
};

}  // namespace oxide::backend
