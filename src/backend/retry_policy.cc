#include "backend/retry_policy.h"

#include <algorithm>
#include <cmath>

namespace oxide::backend {

RetryPolicy::RetryPolicy(RetryOptions options)
    : options_(options), random_(options.seed ? *options.seed : std::random_device{}()) {}

bool RetryPolicy::IsRetryable(const HttpRequest& request, const HttpResponse& response) {
  // A request whose effect is not idempotent is never repeated: after a failure its outcome is
  // unknown (a 503 from a proxy, a timeout or a lost connection may follow a completed create),
  // so the caller must look the resource up instead.
  if (!request.idempotent) return false;
  switch (response.transport_error) {
    case TransportError::kTimeout:
    case TransportError::kConnect:
      return true;
    case TransportError::kTls:  // a certificate problem does not go away by itself
    case TransportError::kOther:
      return false;
    case TransportError::kNone:
      break;
  }
  const int s = response.status;
  return s == 429 || s == 502 || s == 503 || s == 504;
}

std::optional<std::chrono::milliseconds> RetryPolicy::NextDelay(const HttpRequest& request,
                                                                const HttpResponse& response,
                                                                int attempt) {
  if (attempt >= options_.max_attempts || !IsRetryable(request, response)) return std::nullopt;
  if (response.retry_after) {
    const auto wanted =
        std::chrono::duration_cast<std::chrono::milliseconds>(*response.retry_after);
    if (wanted > options_.max_retry_after) return std::nullopt;
    return wanted;
  }
  return Backoff(attempt);
}

// "Equal jitter": half the exponential step is fixed, the other half random, so retries of many
// clients spread out but none comes back immediately.
std::chrono::milliseconds RetryPolicy::Backoff(int attempt) {
  const double step = static_cast<double>(options_.base_delay.count()) *
                      std::pow(options_.multiplier, std::max(0, attempt - 1));
  const double capped = std::min(step, static_cast<double>(options_.max_delay.count()));
  std::uniform_real_distribution<double> half(0.0, capped / 2);
  return std::chrono::milliseconds(static_cast<int64_t>(capped / 2 + half(random_)));
}

}  // namespace oxide::backend
