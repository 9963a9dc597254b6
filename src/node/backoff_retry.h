// Retry with backoff on Clock timers: the scaffolding of the node's two waits at start
// (provider_id_wait.h, startup_taint_removal.h). Its owner says when to try again; it keeps the
// timers: the next attempt after a delay doubling from `first_retry` up to `max_retry`, one
// report every `report_every` while it runs, and how long it has run. Driven by Clock timers, so
// tests advance a ManualClock. Loop thread only (the thread that runs the clock's timers).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <utility>

#include "loop/clock.h"
#include "util/log.h"

namespace oxide::node {

class BackoffRetry {
 public:
  struct Timing {
    std::chrono::milliseconds first_retry;
    std::chrono::milliseconds max_retry;
    std::chrono::milliseconds report_every;
  };
  // The timing an owner's options give (their first_retry, max_retry and report_every).
  template <typename Options>
  static Timing TimingOf(const Options& options) {
    return {.first_retry = options.first_retry,
            .max_retry = options.max_retry,
            .report_every = options.report_every};
  }

  // `attempt` starts one attempt (its owner handles the outcome); `report` writes the line said
  // every `report_every`. Neither may destroy this object.
  BackoffRetry(Clock* clock, Timing timing, std::function<void()> attempt,
               std::function<void()> report);
  // Cancels the timers; an attempt still in flight completes into nothing (Guard).
  ~BackoffRetry();
  BackoffRetry(const BackoffRetry&) = delete;
  BackoffRetry& operator=(const BackoffRetry&) = delete;

  // Runs from now on: the delay is `first_retry`, the first report comes after `report_every`.
  void Start();
  // No more attempts or reports; running() is false.
  void Stop();
  // One attempt now.
  void AttemptNow();
  // One attempt after next_delay(), which then doubles (up to `max_retry`).
  void RetryLater();
  // next_delay() back to `first_retry`.
  void ResetDelay() { next_delay_ = timing_.first_retry; }

  std::chrono::milliseconds next_delay() const { return next_delay_; }
  bool running() const { return running_; }
  int attempts() const { return attempts_; }  // attempts started since Start
  log::Number WaitedSeconds() const;          // since Start

  // Wraps an attempt's completion so that it does nothing once this object has stopped or is
  // gone.
  template <typename Result>
  std::function<void(Result)> Guard(std::function<void(Result)> done) const {
    return
        [self = std::weak_ptr<BackoffRetry* const>(self_), done = std::move(done)](Result result) {
          std::shared_ptr<BackoffRetry* const> alive = self.lock();
          if (alive && (*alive)->running()) done(std::move(result));
        };
  }

 private:
  void Report();
  void CancelTimers();

  Clock* clock_;
  const Timing timing_;
  std::function<void()> attempt_;
  std::function<void()> report_;
  bool running_ = false;
  Clock::TimePoint since_{};
  std::chrono::milliseconds next_delay_{0};
  int attempts_ = 0;
  Clock::TimerId attempt_timer_ = 0;
  Clock::TimerId report_timer_ = 0;
  // Held weakly by the attempts in flight.
  std::shared_ptr<BackoffRetry* const> self_ = std::make_shared<BackoffRetry* const>(this);
};

}  // namespace oxide::node
