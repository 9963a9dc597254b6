#include "node/backoff_retry.h"

#include <algorithm>
#include <cstdint>

namespace oxide::node {

BackoffRetry::BackoffRetry(Clock* clock, Timing timing, std::function<void()> attempt,
                           std::function<void()> report)
    : clock_(clock), timing_(timing), attempt_(std::move(attempt)), report_(std::move(report)) {}

BackoffRetry::~BackoffRetry() {
  CancelTimers();
}

void BackoffRetry::Start() {
  running_ = true;
  since_ = clock_->Now();
  next_delay_ = timing_.first_retry;
  report_timer_ = clock_->StartTimer(timing_.report_every, [this] { Report(); });
}

void BackoffRetry::Stop() {
  running_ = false;
  CancelTimers();
}

void BackoffRetry::AttemptNow() {
  attempt_timer_ = 0;
  ++attempts_;
  attempt_();
}

void BackoffRetry::RetryLater() {
  const std::chrono::milliseconds delay = next_delay_;
  next_delay_ = std::min(delay * 2, timing_.max_retry);
  attempt_timer_ = clock_->StartTimer(delay, [this] { AttemptNow(); });
}

log::Number BackoffRetry::WaitedSeconds() const {
  return log::Num(static_cast<int64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(clock_->Now() - since_).count()));
}

void BackoffRetry::Report() {
  report_();
  report_timer_ = clock_->StartTimer(timing_.report_every, [this] { Report(); });
}

void BackoffRetry::CancelTimers() {
  for (Clock::TimerId* timer : {&attempt_timer_, &report_timer_}) {
    if (*timer != 0) clock_->CancelTimer(*timer);
    *timer = 0;
  }
}

}  // namespace oxide::node
