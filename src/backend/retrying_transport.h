// An HttpTransport that repeats failed idempotent requests on another transport after a
// RetryPolicy delay, waiting on Clock timers (never sleeping). Loop thread only.
#pragma once

#include <memory>
#include <unordered_set>

#include "backend/http_types.h"
#include "backend/retry_policy.h"
#include "loop/clock.h"

namespace oxide::backend {

class RetryingTransport : public HttpTransport {
 public:
  RetryingTransport(Clock* clock, std::unique_ptr<HttpTransport> inner, RetryOptions options);
  // Drops pending retries (their callbacks uncalled).
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

  Clock* clock_;
  std::unique_ptr<HttpTransport> inner_;
  RetryPolicy policy_;
  std::unordered_set<Clock::TimerId> waiting_;  // timers of pending retries
  uint64_t retries_ = 0;
};

}  // namespace oxide::backend
