// When and how long to wait before repeating a failed Oxide request: jittered exponential
// backoff for idempotent requests on 429/502/503/504, timeouts and connection errors, honouring
// Retry-After. Pure logic with its own random generator: one owner, loop thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>

#include "backend/http_types.h"

namespace oxide::backend {

struct RetryOptions {
  int max_attempts = 4;  // first try included; 1 = never retry
  std::chrono::milliseconds base_delay{200};
  double multiplier = 2.0;
  std::chrono::milliseconds max_delay{10000};
  // A Retry-After longer than this is not waited for: the failure is returned instead.
  std::chrono::milliseconds max_retry_after{30000};
  std::optional<uint64_t> seed;  // fixed jitter sequence (tests); default: random
};

class RetryPolicy {
 public:
  explicit RetryPolicy(RetryOptions options);

  // Is this outcome worth another try at all (whatever the attempt count)?
  static bool IsRetryable(const HttpRequest& request, const HttpResponse& response);

  // The wait before attempt `attempt + 1`, after attempt `attempt` (1-based) ended in
  // `response`; nullopt = give up and return `response`.
  std::optional<std::chrono::milliseconds> NextDelay(const HttpRequest& request,
                                                     const HttpResponse& response, int attempt);

  const RetryOptions& options() const { return options_; }

 private:
  std::chrono::milliseconds Backoff(int attempt);

  RetryOptions options_;
  std::mt19937_64 random_;
};

}  // namespace oxide::backend
