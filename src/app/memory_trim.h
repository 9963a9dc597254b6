// Gives memory back to the kernel after a burst. gRPC's threads and the loop free what a burst
// of calls (or of oversized requests gRPC refused) allocated, but glibc keeps the freed pages in
// its arenas, so the plugin's RSS would stay at the burst's peak. Every `period` the loop queues
// one check on libuv's worker pool: when the RSS grew by more than `slack` since the last trim,
// malloc_trim(0) returns the free pages. Nothing runs on the loop but the timer and the queueing.
// Construct, Start() and Stop() on the loop thread; the check runs on a worker thread.
#pragma once

#include <uv.h>

#include <atomic>
#include <chrono>
#include <cstddef>

namespace oxide {

// The process's resident set in bytes (/proc/self/statm); 0 when unreadable. Any thread.
size_t ResidentBytes();

class MemoryTrim {
 public:
  MemoryTrim(uv_loop_t* loop, std::chrono::milliseconds period, size_t slack);
  MemoryTrim(const MemoryTrim&) = delete;
  MemoryTrim& operator=(const MemoryTrim&) = delete;

  // Starts the timer (its handle is made here, so an unstarted MemoryTrim holds none).
  void Start();
  // Closes the timer; a check already queued still finishes (the loop runs until it has).
  void Stop();
  // One check and, when the RSS grew by more than the slack, one trim; returns whether it
  // trimmed. Any thread (the worker pool; tests call it directly).
  bool CheckAndTrim();
  uint64_t trims() const { return trims_.load(); }

 private:
  static void OnTimer(uv_timer_t* timer);

  uv_loop_t* loop_;
  uv_timer_t timer_{};
  uv_work_t work_{};
  bool started_ = false;      // loop thread only
  bool work_queued_ = false;  // loop thread only
  std::chrono::milliseconds period_;
  size_t slack_;
  std::atomic<size_t> baseline_{0};
  std::atomic<uint64_t> trims_{0};
};

}  // namespace oxide
