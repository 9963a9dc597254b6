// A Clock for tests whose time moves only when the test says: Advance() runs the timers that fall
// due, in due order, each with Now() at its due time, on the calling thread (which must be the
// loop thread of whatever uses the clock). It records the delay of every timer started, so a test
// can check what was asked for without waiting for it. Loop (test) thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "loop/clock.h"

namespace oxide::testing {

class ManualClock : public Clock {
 public:
  ManualClock() = default;

  TimePoint Now() const override { return now_; }
  // kWallStart (an arbitrary fixed instant) plus the time advanced so far; after SetWall(), the
  // instant set plus the time advanced since.
  int64_t WallMillis() const override;
  // Sets what WallMillis() reads now (e.g. the real time, to compare with a server's time
  // stamps); Now() and the timers do not move.
  void SetWall(int64_t wall_ms) { wall_start_ = wall_ms - elapsed().count(); }
  TimerId StartTimer(std::chrono::milliseconds delay, std::function<void()> fn) override;
  void CancelTimer(TimerId id) override;

  // Moves time forward by `by`, running every timer due up to then (including ones those start).
  void Advance(std::chrono::milliseconds by);
  // Moves time to the earliest pending timer and runs what is due then; false if none is pending.
  bool AdvanceToNextTimer();
  std::optional<TimePoint> NextDue() const { return timers_.NextDue(); }
  size_t pending_timers() const { return timers_.size(); }
  // Every delay passed to StartTimer, in order; and the time advanced since construction.
  const std::vector<std::chrono::milliseconds>& delays_started() const { return delays_; }
  std::chrono::milliseconds elapsed() const;

  static constexpr int64_t kWallStart = 1'750'000'000'000;  // 2025-06-15, in ms since the epoch

 private:
  void RunDueUpTo(TimePoint until);

  // Not the epoch: code that treats a default-constructed time point as "never" stays honest.
  TimePoint start_ = TimePoint{} + std::chrono::hours(24);
  TimePoint now_ = start_;
  int64_t wall_start_ = kWallStart;
  TimerQueue timers_;
  std::vector<std::chrono::milliseconds> delays_;
};

}  // namespace oxide::testing
