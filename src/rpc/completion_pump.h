// Moves completed gRPC tags from a completion queue to the event loop. The pump's thread only
// calls cq->Next() and appends (tag, ok) to a locked queue; the loop thread runs the tags in
// order. This is the only place where a gRPC thread meets the loop. The pump's thread is named
// kThreadName and scheduled SCHED_BATCH, so that waking it never preempts the loop thread.
//
// Waking a sleeping loop thread costs tens of microseconds on a VM (a cross-CPU interrupt), so
// after running a small batch the loop keeps polling the queue for a short, bounded while
// (`spin`, default 50 us, yielding the CPU to any runnable thread) before it goes back to sleep:
// a tag that follows closely is picked up without a wakeup. An idle plugin never spins, and a
// busy one neither: large batches mean the loop is rarely asleep. Nor does one whose spins do
// not pay: after kMissesBeforePause spins in a row that caught no tag (events spaced wider than
// the spin), the next kWakeupsWithoutSpin wakeups do not spin.
// Both are kept for their measured worth (docs/performance.md, issue 36): without SCHED_BATCH
// and the spin, 13–14 % fewer RPCs/s at 16 callers against an instant Oxide.
//
// Deferrable tags (an answer was sent: only bookkeeping is left) do not wake the loop: they run
// after the loop's next wakeup for anything else (a check handle), or, if none comes, when the
// pump wakes it kDeferMax after the first of them — one loop wakeup less per call under load.
#pragma once

#include <grpcpp/completion_queue.h>
#include <uv.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "loop/event_loop.h"
#include "rpc/completion_tag.h"

namespace oxide::rpc {

class CompletionPump {
 public:
  static constexpr const char* kThreadName = "csi-cq-pump";  // as ps and /proc show it

  // Loop thread. Starts the pump thread for `cq`; `on_drained` runs on the loop thread once the
  // queue has been shut down and every remaining tag has run.
  CompletionPump(EventLoop* loop, grpc::CompletionQueue* cq, std::function<void()> on_drained,
                 std::chrono::microseconds spin = std::chrono::microseconds(50));
  ~CompletionPump();
  CompletionPump(const CompletionPump&) = delete;
  CompletionPump& operator=(const CompletionPump&) = delete;

 private:
  void PumpThread();
  static void OnWakeup(uv_async_t* handle);
  static void OnCheck(uv_check_t* handle);
  void RunPending();
  // Runs the tags queued so far and returns how many; 0 once the queue is drained for good.
  size_t RunBatch();
  static constexpr size_t kSpinMaxBatch = 4;
  static constexpr int kMissesBeforePause = 4;
  static constexpr int kWakeupsWithoutSpin = 64;
  static constexpr std::chrono::milliseconds kDeferMax{2};

  grpc::CompletionQueue* cq_;
  std::chrono::microseconds spin_;
  std::function<void()> on_drained_;
  uv_async_t* wakeup_;  // freed in its close callback
  uv_check_t* check_;   // runs deferred tags after each loop wakeup; freed likewise

  std::mutex mutex_;
  std::vector<std::pair<CompletionTag*, bool>> pending_;  // guarded by mutex_
  bool drained_ = false;                                  // guarded by mutex_
  std::atomic<bool> has_pending_{false};  // a hint for the spinning loop; pending_ is the truth
  std::atomic<bool> has_urgent_{false};   // likewise, for tags that are not deferrable
  int missed_spins_ = 0;                  // loop thread only, like the two below
  int wakeups_without_spin_ = 0;
  std::thread thread_;
};

}  // namespace oxide::rpc
