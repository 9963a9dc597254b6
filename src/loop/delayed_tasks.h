// Closures that run on the loop after a delay (polling, backoff), each on a Clock timer.
// Destroying the owner cancels whatever has not run. Loop thread only.
#pragma once

#include <chrono>
#include <functional>
#include <unordered_set>

#include "loop/clock.h"
#include "loop/loop_affinity.h"

namespace oxide {

class DelayedTasks {
 public:
  explicit DelayedTasks(Clock* clock) : clock_(clock) {}
  ~DelayedTasks();
  DelayedTasks(const DelayedTasks&) = delete;
  DelayedTasks& operator=(const DelayedTasks&) = delete;

  void RunAfter(std::chrono::milliseconds delay, std::function<void()> task);
  size_t pending() const {
    affinity_.Check("DelayedTasks::pending");
    return timers_.size();
  }
  // A pointer fixed at construction: not checked.
  Clock& clock() { return *clock_; }

 private:
  Clock* clock_;
  std::unordered_set<Clock::TimerId> timers_;
  LoopAffinity affinity_;
};

}  // namespace oxide
