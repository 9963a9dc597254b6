// Bookkeeping shared by all call objects of one server: whether new calls are accepted, whether
// the completion queue still takes operations, the count of calls in flight, and the per-call
// log record. Loop thread only.
#pragma once

#include <grpcpp/server_context.h>

#include <cstdint>
#include <string>

#include "rpc/call_info.h"

namespace oxide::rpc {

class CallRegistry {
 public:
  CallRegistry();

  bool accepting() const { return accepting_; }
  void StopAccepting() { accepting_ = false; }
  bool queue_open() const { return queue_open_; }
  void CloseQueue() { queue_open_ = false; }

  int in_flight() const { return in_flight_; }
  uint64_t served() const { return served_; }

  std::string NextRequestId();
  void CallStarted() { ++in_flight_; }
  // Logs the outcome. `volume_id` may be empty. `delivered` is false when the CO never got it.
  void CallEnded(const CallInfo& info, const grpc::Status& status, const std::string& volume_id,
                 bool delivered);

 private:
  bool accepting_ = true;
  bool queue_open_ = true;
  int in_flight_ = 0;
  uint64_t served_ = 0;
  uint64_t id_prefix_;
  uint64_t id_counter_ = 0;
};

}  // namespace oxide::rpc
