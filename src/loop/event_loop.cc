#include "loop/event_loop.h"

#include <cstdlib>

#include "util/log.h"

namespace oxide {

EventLoop::EventLoop() : loop_thread_(std::this_thread::get_id()) {
  if (uv_loop_init(&loop_) != 0 || uv_async_init(&loop_, &wakeup_, &EventLoop::OnAsync) != 0) {
    log::Error("cannot initialise the event loop");
    std::abort();
  }
  wakeup_.data = this;
}

EventLoop::~EventLoop() {
  if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&wakeup_))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&wakeup_), nullptr);
  }
  uv_run(&loop_, UV_RUN_DEFAULT);  // lets close callbacks run
  uv_loop_close(&loop_);
}

void EventLoop::Post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    posted_.push_back(std::move(task));
  }
  uv_async_send(&wakeup_);
}

void EventLoop::Run() {
  loop_thread_ = std::this_thread::get_id();
  uv_run(&loop_, UV_RUN_DEFAULT);
}

void EventLoop::Stop() {
  DrainPosted();
  if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&wakeup_))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&wakeup_), nullptr);
  }
}

void EventLoop::OnAsync(uv_async_t* handle) {
  static_cast<EventLoop*>(handle->data)->DrainPosted();
}

void EventLoop::DrainPosted() {
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard lock(mutex_);
    batch.swap(posted_);
  }
  for (auto& task : batch)
    task();
}

}  // namespace oxide
