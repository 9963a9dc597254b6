#include "loop/clock.h"

#include <algorithm>

namespace oxide {

Clock::TimerId TimerQueue::Add(Clock::TimePoint due, std::function<void()> fn) {
  const Clock::TimerId id = next_id_++;
  by_due_.emplace(std::make_pair(due, id), std::move(fn));
  due_of_.emplace(id, due);
  return id;
}

bool TimerQueue::Cancel(Clock::TimerId id) {
  auto found = due_of_.find(id);
  if (found == due_of_.end()) return false;
  by_due_.erase({found->second, id});
  due_of_.erase(found);
  return true;
}

std::optional<Clock::TimePoint> TimerQueue::NextDue() const {
  if (by_due_.empty()) return std::nullopt;
  return by_due_.begin()->first.first;
}

std::optional<std::function<void()>> TimerQueue::PopDue(Clock::TimePoint now) {
  if (by_due_.empty() || by_due_.begin()->first.first > now) return std::nullopt;
  auto first = by_due_.begin();
  std::function<void()> fn = std::move(first->second);
  due_of_.erase(first->first.second);
  by_due_.erase(first);
  return fn;
}

LoopClock::LoopClock(uv_loop_t* loop) : loop_(loop), timer_(new uv_timer_t) {
  uv_timer_init(loop_, timer_);
  timer_->data = this;
}

LoopClock::~LoopClock() {
  uv_timer_stop(timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(timer_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_timer_t*>(handle); });
}

int64_t LoopClock::WallMillis() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Clock::TimerId LoopClock::StartTimer(std::chrono::milliseconds delay, std::function<void()> fn) {
  const TimerId id =
      timers_.Add(Now() + std::max(delay, std::chrono::milliseconds(0)), std::move(fn));
  Arm();
  return id;
}

void LoopClock::CancelTimer(TimerId id) {
  if (timers_.Cancel(id)) Arm();
}

void LoopClock::OnTimer(uv_timer_t* timer) {
  static_cast<LoopClock*>(timer->data)->RunDue();
}

void LoopClock::RunDue() {
  running_ = true;
  // What is due now; timers these start run in a later turn even with no delay, so a timer
  // that keeps re-starting itself cannot starve I/O.
  const TimePoint now = Now();
  while (auto fn = timers_.PopDue(now))
    (*fn)();
  running_ = false;
  Arm();
}

void LoopClock::Arm() {
  if (running_) return;
  const std::optional<TimePoint> due = timers_.NextDue();
  if (!due) {
    uv_timer_stop(timer_);
    return;
  }
  // uv timers count from the loop's cached time: refresh it so the wait is measured from now.
  // Rounded up, so the timer never fires before the earliest due time.
  uv_update_time(loop_);
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(*due - Now());
  uv_timer_start(timer_, &LoopClock::OnTimer,
                 static_cast<uint64_t>(std::max<int64_t>(wait.count(), 0)), 0);
}

}  // namespace oxide
