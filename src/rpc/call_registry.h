// Bookkeeping shared by all call objects of one server: whether new calls are served, whether
// the completion queue still takes operations, the count of calls being served, and the
// per-call log record and metrics. Loop thread only.
#pragma once

#include <grpcpp/server_context.h>

#include <cstdint>
#include <functional>
#include <string>

#include "rpc/call_info.h"

namespace oxide::rpc {

class CallRegistry {
 public:
  CallRegistry();

  // While accepting, calls are served; afterwards they are refused with UNAVAILABLE.
  bool accepting() const { return accepting_; }
  // Stops serving new calls; `on_idle` runs once no served call is left in flight (at once if
  // there is none).
  void StopAccepting(std::function<void()> on_idle);
  // While the queue is open, call objects may start queue operations (listen, answer).
  bool queue_open() const { return queue_open_; }
  void CloseQueue() { queue_open_ = false; }

  int in_flight() const { return in_flight_; }
  uint64_t served() const { return served_; }

  std::string NextRequestId();
  void CallStarted(const char* method);
  // Logs the outcome. `volume_id` may be empty. `delivered` is false when the CO never got it.
  // `counted` says whether CallStarted() was called for it.
  void CallEnded(const CallInfo& info, const grpc::Status& status, const std::string& volume_id,
                 bool delivered, bool counted);

 private:
  bool accepting_ = true;
  bool queue_open_ = true;
  std::function<void()> on_idle_;
  int in_flight_ = 0;
  uint64_t served_ = 0;
  uint64_t id_prefix_;
  uint64_t id_counter_ = 0;
};

}  // namespace oxide::rpc
