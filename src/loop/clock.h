// Time as the loop thread sees it: Now() on a steady clock (deadlines, backoff), WallMillis() for
// persisted timestamps, and one-shot timers that run on the loop thread. Components take a Clock*
// in their constructors so tests can hand them a ManualClock (test/support/manual_clock.h), whose
// time moves only when the test advances it. LoopClock is the real one: steady_clock,
// system_clock and a single libuv timer for all its timers. TimerQueue is the bookkeeping both
// share. Loop thread only (every method; timers run on it).
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

namespace oxide {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using TimerId = uint64_t;  // 0 is never a timer's id

  virtual ~Clock() = default;

  virtual TimePoint Now() const = 0;
  // Milliseconds since the Unix epoch, for timestamps that outlive the process.
  virtual int64_t WallMillis() const = 0;
  // Runs `fn` once, on the loop thread, `delay` (negative: 0) after Now(). Timers due at the same
  // time run in the order they were started.
  virtual TimerId StartTimer(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
  // The timer's `fn` will not run. A no-op for a timer that already ran or was cancelled.
  virtual void CancelTimer(TimerId id) = 0;
};

// Timers ordered by due time, then by start order.
class TimerQueue {
 public:
  Clock::TimerId Add(Clock::TimePoint due, std::function<void()> fn);
  bool Cancel(Clock::TimerId id);
  std::optional<Clock::TimePoint> NextDue() const;
  // Takes out the earliest timer if it is due at `now` or before.
  std::optional<std::function<void()>> PopDue(Clock::TimePoint now);
  size_t size() const { return by_due_.size(); }

 private:
  std::map<std::pair<Clock::TimePoint, Clock::TimerId>, std::function<void()>> by_due_;
  std::unordered_map<Clock::TimerId, Clock::TimePoint> due_of_;
  Clock::TimerId next_id_ = 1;
};

// The real clock: one uv timer armed for the earliest pending timer.
class LoopClock : public Clock {
 public:
  explicit LoopClock(uv_loop_t* loop);
  // Pending timers never run. The loop must run afterwards so the uv timer's close callback
  // frees it.
  ~LoopClock() override;
  LoopClock(const LoopClock&) = delete;
  LoopClock& operator=(const LoopClock&) = delete;

  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  int64_t WallMillis() const override;
  TimerId StartTimer(std::chrono::milliseconds delay, std::function<void()> fn) override;
  void CancelTimer(TimerId id) override;

  size_t pending_timers() const { return timers_.size(); }

 private:
  static void OnTimer(uv_timer_t* timer);
  void RunDue();
  void Arm();

  uv_loop_t* loop_;
  uv_timer_t* timer_;  // heap: freed in its close callback
  TimerQueue timers_;
  bool running_ = false;  // inside RunDue: it re-arms when done
};

}  // namespace oxide
