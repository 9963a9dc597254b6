#include "loop/delayed_tasks.h"

#include <memory>
#include <utility>

namespace oxide {

DelayedTasks::~DelayedTasks() {
  for (Clock::TimerId id : timers_)
    clock_->CancelTimer(id);
}

void DelayedTasks::RunAfter(std::chrono::milliseconds delay, std::function<void()> task) {
  affinity_.Check("DelayedTasks::RunAfter");
  // The id is known only once the timer exists; the closure finds it through this cell.
  auto id = std::make_shared<Clock::TimerId>(0);
  *id = clock_->StartTimer(delay, [this, id, task = std::move(task)] {
    timers_.erase(*id);
    task();
  });
  timers_.insert(*id);
}

}  // namespace oxide
