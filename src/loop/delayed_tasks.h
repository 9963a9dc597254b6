// Closures that run on the loop after a delay (polling, backoff), each on its own uv timer.
// Destroying the owner cancels whatever has not run. Loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>
#include <unordered_set>

namespace oxide {

class DelayedTasks {
 public:
  explicit DelayedTasks(uv_loop_t* loop) : loop_(loop) {}
  ~DelayedTasks();
  DelayedTasks(const DelayedTasks&) = delete;
  DelayedTasks& operator=(const DelayedTasks&) = delete;

  void RunAfter(std::chrono::milliseconds delay, std::function<void()> task);
  size_t pending() const { return timers_.size(); }

 private:
  struct Task;
  static void OnTimer(uv_timer_t* timer);
  static void Close(uv_timer_t* timer);

  uv_loop_t* loop_;
  std::unordered_set<uv_timer_t*> timers_;
};

}  // namespace oxide
