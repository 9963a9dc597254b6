#include "support/manual_clock.h"

#include <algorithm>
#include <utility>

namespace oxide::testing {

int64_t ManualClock::WallMillis() const {
  return wall_start_ + elapsed().count();
}

std::chrono::milliseconds ManualClock::elapsed() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now_ - start_);
}

Clock::TimerId ManualClock::StartTimer(std::chrono::milliseconds delay, std::function<void()> fn) {
  delays_.push_back(delay);
  return timers_.Add(now_ + std::max(delay, std::chrono::milliseconds(0)), std::move(fn));
}

void ManualClock::CancelTimer(TimerId id) {
  timers_.Cancel(id);
}

void ManualClock::Advance(std::chrono::milliseconds by) {
  RunDueUpTo(now_ + std::max(by, std::chrono::milliseconds(0)));
}

bool ManualClock::AdvanceToNextTimer() {
  const std::optional<TimePoint> due = timers_.NextDue();
  if (!due) return false;
  RunDueUpTo(std::max(*due, now_));
  return true;
}

void ManualClock::RunDueUpTo(TimePoint until) {
  while (true) {
    const std::optional<TimePoint> due = timers_.NextDue();
    if (!due || *due > until) break;
    now_ = std::max(now_, *due);
    if (auto fn = timers_.PopDue(now_)) (*fn)();
  }
  now_ = std::max(now_, until);
}

}  // namespace oxide::testing
