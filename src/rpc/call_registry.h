// Bookkeeping shared by all call objects of one server: whether new calls are served, whether
// the completion queue still takes operations, the count of calls being served, and the
// per-call log record and metrics. Loop thread only.
#pragma once

#include <grpcpp/server_context.h>

#include <cstdint>
#include <functional>
#include <string>

#include "rpc/call_info.h"
#include "rpc/call_record.h"
#include "util/log.h"

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
  // gRPC is being stopped (grpc::Server::Shutdown): a call whose answer is not delivered from now
  // on was cut off, and its caller got UNAVAILABLE from gRPC instead (docs/logging.md).
  void GrpcStopping() { grpc_stopping_ = true; }

  int in_flight() const { return in_flight_; }
  uint64_t served() const { return served_; }

  std::string NextRequestId();
  void CallStarted(const char* method);
  // Logs the outcome. `delivered` is false when the CO never got the answer. `counted` says
  // whether CallStarted() was called for it.
  void CallEnded(const CallInfo& info, const CallRecord& record, bool delivered, bool counted);

  // The level of a call's record: the rule of docs/logging.md.
  static log::Level LevelOf(const char* method, grpc::StatusCode code, bool operator_must_fix);

 private:
  bool accepting_ = true;
  bool queue_open_ = true;
  bool grpc_stopping_ = false;
  std::function<void()> on_idle_;
  int in_flight_ = 0;
  uint64_t served_ = 0;
  uint64_t id_prefix_;
  uint64_t id_counter_ = 0;
};

}  // namespace oxide::rpc
