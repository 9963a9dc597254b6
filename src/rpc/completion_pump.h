// Moves completed gRPC tags from a completion queue to the event loop. The pump's thread only
// calls cq->Next() and appends (tag, ok) to a locked queue; the loop thread runs the tags in
// order. This is the only place where a gRPC thread meets the loop.
#pragma once

#include <grpcpp/completion_queue.h>
#include <uv.h>

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
  // Loop thread. Starts the pump thread for `cq`; `on_drained` runs on the loop thread once the
  // queue has been shut down and every remaining tag has run.
  CompletionPump(EventLoop* loop, grpc::CompletionQueue* cq, std::function<void()> on_drained);
  ~CompletionPump();
  CompletionPump(const CompletionPump&) = delete;
  CompletionPump& operator=(const CompletionPump&) = delete;

 private:
  void PumpThread();
  static void OnWakeup(uv_async_t* handle);
  void RunPending();

  grpc::CompletionQueue* cq_;
  std::function<void()> on_drained_;
  uv_async_t* wakeup_;  // freed in its close callback

  std::mutex mutex_;
  std::vector<std::pair<CompletionTag*, bool>> pending_;  // guarded by mutex_
  bool drained_ = false;                                  // guarded by mutex_
  std::thread thread_;
};

}  // namespace oxide::rpc
