// The plugin's event loop: one libuv loop on one thread owns all engine state.
// Post() is the only call other threads may make; everything else runs on the loop thread.
// Posted closures are taken out of the queue under the lock and run without it, in order.
#pragma once

#include <uv.h>

#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace oxide {

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  uv_loop_t* uv() { return &loop_; }

  // Any thread, until Stop(). Runs `task` on the loop thread, after the tasks posted before it.
  void Post(std::function<void()> task);

  // Runs the loop on the calling thread (which becomes the loop thread) until Stop() and until
  // every handle is closed.
  void Run();
  // Loop thread. Closes the loop's own handles; Run() returns once all others are closed too.
  void Stop();

  bool IsLoopThread() const { return std::this_thread::get_id() == loop_thread_; }

 private:
  static void OnAsync(uv_async_t* handle);
  void DrainPosted();

  uv_loop_t loop_{};
  uv_async_t wakeup_{};
  std::thread::id loop_thread_;

  std::mutex mutex_;
  std::vector<std::function<void()>> posted_;  // guarded by mutex_
};

}  // namespace oxide
