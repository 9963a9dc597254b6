// The CSI gRPC server: the three services on one unix socket, on the async completion-queue API.
// Created, started and shut down on the loop thread; the completion queue is drained by a
// CompletionPump thread that only hands tags to the loop.
#pragma once

#include <grpcpp/server.h>
#include <sys/types.h>
#include <uv.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "loop/event_loop.h"
#include "rpc/call_registry.h"
#include "rpc/completion_pump.h"
#include "rpc/csi_rpcs.h"
#include "util/status.h"

namespace oxide::rpc {

struct ServerOptions {
  std::string socket_path;
  mode_t socket_mode = 0660;
  // Calls each method can accept before the loop re-arms it.
  int listeners_per_method = 8;
  // How long the loop polls for more gRPC events after a small batch (see CompletionPump).
  std::chrono::microseconds pump_spin{50};
};

// The three CSI services with every method raw (requests and answers as grpc::ByteBuffer; see
// rpc/unary_call.h): csi::v1::S::WithRawMethod_A<WithRawMethod_B<...<csi::v1::S::Service>>>.
#define OXIDE_RAW_OPEN(service, name) csi::v1::service::WithRawMethod_##name <
#define OXIDE_RAW_CLOSE(service, name) >
using RawIdentityService = OXIDE_CSI_IDENTITY_RPCS(OXIDE_RAW_OPEN) csi::v1::Identity::Service
    OXIDE_CSI_IDENTITY_RPCS(OXIDE_RAW_CLOSE);
using RawControllerService = OXIDE_CSI_CONTROLLER_RPCS(OXIDE_RAW_OPEN) csi::v1::Controller::Service
    OXIDE_CSI_CONTROLLER_RPCS(OXIDE_RAW_CLOSE);
using RawNodeService = OXIDE_CSI_NODE_RPCS(OXIDE_RAW_OPEN) csi::v1::Node::Service
    OXIDE_CSI_NODE_RPCS(OXIDE_RAW_CLOSE);
#undef OXIDE_RAW_OPEN
#undef OXIDE_RAW_CLOSE

class CsiServer {
 public:
  CsiServer(EventLoop* loop, CsiHandlers handlers);
  ~CsiServer();
  CsiServer(const CsiServer&) = delete;
  CsiServer& operator=(const CsiServer&) = delete;

  // Binds the socket (replacing a stale one, refusing a live one) and starts serving.
  Status Start(const ServerOptions& options);

  // Stops serving new calls (they are refused with UNAVAILABLE), lets calls in flight finish
  // within `grace`, stops gRPC, drains the queue, removes the socket, then runs `done` on the
  // loop thread. Idempotent.
  void Shutdown(std::chrono::milliseconds grace, std::function<void()> done);

  const CallRegistry& registry() const { return registry_; }

 private:
  void ListenAll();
  void StopGrpcServer();
  void CloseQueue();
  void AfterQueueDrained();

  EventLoop* loop_;
  CsiHandlers handlers_;
  ServerOptions options_;

  // Named after the CSI service so that the X-macros can find them.
  RawIdentityService Identity_service_;
  RawControllerService Controller_service_;
  RawNodeService Node_service_;

#define OXIDE_DECLARE_METHOD(service, name)                                           \
  UnaryMethod<Raw##service##Service, csi::v1::name##Request, csi::v1::name##Response> \
      name##_method_;
  OXIDE_CSI_ALL_RPCS(OXIDE_DECLARE_METHOD)
#undef OXIDE_DECLARE_METHOD

  CallRegistry registry_;
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CompletionPump> pump_;
  std::thread stopper_;
  uv_timer_t* grace_timer_ = nullptr;  // freed in its close callback
  bool shutting_down_ = false;
  bool grpc_stopping_ = false;
  std::function<void()> done_;
};

}  // namespace oxide::rpc
