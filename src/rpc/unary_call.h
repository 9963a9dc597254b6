// One object per unary CSI call, on gRPC's async completion-queue API. Its address is the tag of
// "a request arrived"; its `sent_` member is the tag of "the answer was sent" (deferrable: only
// bookkeeping is left then, so it need not wake the loop). It re-arms a listener for its method
// when a request arrives, runs the handler on the loop thread, and deletes itself once gRPC has
// delivered (or dropped) the answer. Loop thread only.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/async_unary_call.h>

#include <functional>
#include <string>

#include "rpc/call_info.h"
#include "rpc/call_registry.h"
#include "rpc/canonical_ids.h"
#include "rpc/completion_tag.h"
#include "rpc/message_redaction.h"
#include "rpc/reply.h"
#include "rpc/size_limits.h"
#include "rpc/status_conversion.h"
#include "util/log.h"

namespace oxide::rpc {

// The CallInfo and the Request live in the call object: they stay valid until the Reply is
// answered (or dropped), not after. A handler that goes asynchronous copies what it needs.
template <typename Request, typename Response>
using Handler = std::function<void(const CallInfo&, const Request&, Reply<Response>)>;

// A method of an async service: how to ask gRPC for its next call, and who handles it. An empty
// handler means the current mode does not serve the RPC: it answers UNIMPLEMENTED.
template <typename Service, typename Request, typename Response>
struct UnaryMethod {
  using RequestFn = void (Service::*)(grpc::ServerContext*, Request*,
                                      grpc::ServerAsyncResponseWriter<Response>*,
                                      grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*);
  const char* name;
  Service* service;
  RequestFn request;
  Handler<Request, Response> handler;
};

template <typename Service, typename Request, typename Response>
class UnaryCall final : public CompletionTag, public ReplySink<Response> {
 public:
  using Method = UnaryMethod<Service, Request, Response>;

  // Asks gRPC for the next call of `method`. Any thread, while the queue is open.
  static void Listen(const Method* method, CallRegistry* registry,
                     grpc::ServerCompletionQueue* cq) {
    auto* call = new UnaryCall(method, registry, cq);
    (method->service->*method->request)(&call->context_, &call->request_, &call->writer_, cq, cq,
                                        call);
  }

  // A request arrived (or, with !ok, the listener is cancelled).
  void Proceed(bool ok) override {
    if (!ok) {  // the server is shutting down; this listener never got a call
      delete this;
      return;
    }
    // Answer first, then re-arm (other listeners cover the gap), so that re-arming is not on
    // this call's path. Listeners are re-armed until the queue closes, also during shutdown, so
    // that a call arriving then is refused cleanly (UNAVAILABLE) instead of cancelled by gRPC.
    // `this` may be gone after Start(): copy what re-arming needs.
    const Method* method = method_;
    CallRegistry* registry = registry_;
    grpc::ServerCompletionQueue* cq = cq_;
    Start();
    if (registry->queue_open()) Listen(method, registry, cq);
  }

  void Answer(Response response, const Status& status) override {
    status_ = ToGrpc(status);
    if (!registry_->queue_open()) {  // too late: the server has gone
      registry_->CallEnded(info_, status_, VolumeIdOf(request_), false, counted_);
      delete this;
      return;
    }
    if (status_.ok()) {
      writer_.Finish(response, status_, Deferrable(&sent_));
    } else {
      writer_.FinishWithError(status_, Deferrable(&sent_));
    }
  }

 private:
  // The tag of the answer's queue operation.
  class Sent final : public CompletionTag {
   public:
    explicit Sent(UnaryCall* call) : call_(call) {}
    void Proceed(bool ok) override { call_->Ended(ok); }

   private:
    UnaryCall* call_;
  };

  UnaryCall(const Method* method, CallRegistry* registry, grpc::ServerCompletionQueue* cq)
      : method_(method), registry_(registry), cq_(cq), writer_(&context_) {}

  void Ended(bool delivered) {
    registry_->CallEnded(info_, status_, VolumeIdOf(request_), delivered, counted_);
    delete this;
  }

  void Start() {
    info_.method = method_->name;
    info_.request_id = registry_->NextRequestId();
    info_.started = std::chrono::steady_clock::now();
    info_.deadline = context_.deadline();
    Reply<Response> reply(this);
    if (!registry_->accepting()) {
      reply.Fail(Unavailable("the plugin is shutting down; retry the call"));
      return;
    }
    counted_ = true;
    registry_->CallStarted(info_.method);
    if (Status limits = CheckSizeLimits(request_); !limits.ok()) {
      reply.Fail(limits);
      return;
    }
    CanonicalizeIds(&request_);
    if (log::Enabled(log::Level::kDebug)) {
      log::Debug("rpc request", {{"rpc", info_.method},
                                 {"request_id", info_.request_id},
                                 {"request", RedactedText(request_)}});
    }
    if (!method_->handler) {
      reply.Fail(Unimplemented(std::string(method_->name) +
                               " is not served by this plugin in its current --mode"));
      return;
    }
    method_->handler(info_, request_, std::move(reply));
  }

  static std::string VolumeIdOf(const Request& request) {
    if constexpr (requires { request.volume_id(); }) {
      return request.volume_id();
    } else if constexpr (requires { request.source_volume_id(); }) {
      return request.source_volume_id();
    } else {
      return {};
    }
  }

  const Method* method_;
  CallRegistry* registry_;
  grpc::ServerCompletionQueue* cq_;
  Sent sent_{this};
  bool counted_ = false;  // served (not refused): counts as in flight until it ends
  grpc::ServerContext context_;
  Request request_;
  grpc::ServerAsyncResponseWriter<Response> writer_;
  CallInfo info_;
  grpc::Status status_;
};

}  // namespace oxide::rpc
