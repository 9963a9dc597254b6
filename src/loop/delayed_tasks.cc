#include "loop/delayed_tasks.h"

#include <memory>
#include <utility>

namespace oxide {

struct DelayedTasks::Task {
  uv_timer_t timer{};
  DelayedTasks* owner = nullptr;
  std::function<void()> run;
};

DelayedTasks::~DelayedTasks() {
  for (uv_timer_t* timer : timers_)
    Close(timer);
}

void DelayedTasks::RunAfter(std::chrono::milliseconds delay, std::function<void()> task) {
  auto* entry = new Task;
  entry->owner = this;
  entry->run = std::move(task);
  uv_timer_init(loop_, &entry->timer);
  entry->timer.data = entry;
  timers_.insert(&entry->timer);
  uv_timer_start(&entry->timer, &DelayedTasks::OnTimer,
                 static_cast<uint64_t>(delay.count() < 0 ? 0 : delay.count()), 0);
}

void DelayedTasks::OnTimer(uv_timer_t* timer) {
  auto* entry = static_cast<Task*>(timer->data);
  entry->owner->timers_.erase(timer);
  std::function<void()> run = std::move(entry->run);
  Close(timer);
  run();
}

void DelayedTasks::Close(uv_timer_t* timer) {
  uv_timer_stop(timer);
  uv_close(reinterpret_cast<uv_handle_t*>(timer),
           [](uv_handle_t* handle) { delete static_cast<Task*>(handle->data); });
}

}  // namespace oxide
