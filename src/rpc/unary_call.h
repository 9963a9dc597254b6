// One object per unary CSI call, on gRPC's async completion-queue API. Its address is the tag of
// "a request arrived"; its `sent_` member is the tag of "the answer was sent" (deferrable: only
// bookkeeping is left then, so it need not wake the loop). It re-arms a listener for its method
// when a request arrives, runs the handler on the loop thread, and deletes itself once gRPC has
// delivered (or dropped) the answer. Methods are registered raw (grpc::ByteBuffer): the call
// object parses the request itself, so that a request protobuf cannot parse (e.g. a string that
// is not UTF-8) is answered INVALID_ARGUMENT with protobuf's reason and logged like any call,
// instead of being cancelled by gRPC unseen. Loop thread only.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/async_unary_call.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include <functional>
#include <string>
#include <type_traits>

#include "csi.pb.h"
#include "rpc/call_info.h"
#include "rpc/call_record.h"
#include "rpc/call_registry.h"
#include "rpc/canonical_ids.h"
#include "rpc/completion_tag.h"
#include "rpc/library_logs.h"
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

// A raw method of an async service: how to ask gRPC for its next call, and who handles it. An
// empty handler means the current mode does not serve the RPC: it answers UNIMPLEMENTED.
template <typename Service, typename Request, typename Response>
struct UnaryMethod {
  using RequestFn = void (Service::*)(grpc::ServerContext*, grpc::ByteBuffer*,
                                      grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>*,
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
    (method->service->*method->request)(&call->context_, &call->payload_, &call->writer_, cq, cq,
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
    record_.SetOutcome(status);
    if (status.ok()) NoteResponseIds(response);
    if (!registry_->queue_open()) {  // too late: the server has gone
      registry_->CallEnded(info_, record_, false, counted_);
      delete this;
      return;
    }
    if (status.ok()) {
      grpc::ByteBuffer encoded;
      bool own_buffer = false;
      grpc::Status serialized =
          grpc::SerializationTraits<Response>::Serialize(response, &encoded, &own_buffer);
      if (serialized.ok()) {
        writer_.Finish(encoded, grpc::Status::OK, Deferrable(&sent_));
        return;
      }
      record_.SetOutcome(Internal("cannot encode the answer: " + serialized.error_message()));
    }
    writer_.FinishWithError(grpc::Status(record_.code, record_.error), Deferrable(&sent_));
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
    registry_->CallEnded(info_, record_, delivered, counted_);
    delete this;
  }

  // Parses the raw request into request_. On failure, the INVALID_ARGUMENT to answer, with what
  // libprotobuf said about it.
  Status ParseRequest() {
    if (!payload_.Valid()) {
      return InvalidArgument(std::string("the request carried no ") +
                             Request::descriptor()->full_name() + " message");
    }
    ProtobufErrorCapture capture;  // libprotobuf's reason, instead of a raw stderr line
    bool parsed = false;
    {
      grpc::ProtoBufferReader reader(&payload_);
      parsed = reader.status().ok() && request_.ParseFromZeroCopyStream(&reader);
    }
    payload_.Clear();
    if (parsed) return Status::Ok();
    std::string reason = capture.text();
    if (reason.empty()) {
      reason = "its bytes are not a protobuf encoding of that message (truncated or malformed)";
    }
    return InvalidArgument("the request is not a valid " + Request::descriptor()->full_name() +
                           ": " + reason);
  }

  // The ids the request names, for the call's record.
  void NoteRequestIds() {
    std::string volume;
    if constexpr (requires { request_.volume_id(); }) {
      volume = request_.volume_id();
    } else if constexpr (requires { request_.source_volume_id(); }) {
      volume = request_.source_volume_id();
    }
    if (LooksLikeUuid(volume)) {
      record_.volume_id = std::move(volume);
    } else {
      record_.requested_volume_id = std::move(volume);
    }
    if constexpr (std::is_same_v<Request, csi::v1::CreateVolumeRequest>) {
      record_.volume_name = request_.name();
    }
    if constexpr (std::is_same_v<Request, csi::v1::CreateSnapshotRequest>) {
      record_.snapshot_name = request_.name();
    }
    if constexpr (requires { request_.node_id(); }) record_.node_id = request_.node_id();
    if constexpr (requires { request_.snapshot_id(); }) {
      record_.snapshot_id = request_.snapshot_id();
    }
  }

  // The ids a successful answer created (CreateVolume's volume, CreateSnapshot's snapshot).
  void NoteResponseIds(const Response& response) {
    if constexpr (requires { response.volume().volume_id(); }) {
      if (record_.volume_id.empty()) record_.volume_id = response.volume().volume_id();
    }
    if constexpr (requires { response.snapshot().snapshot_id(); }) {
      if (record_.snapshot_id.empty()) record_.snapshot_id = response.snapshot().snapshot_id();
    }
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
    // gRPC has already refused a message over the server's receive limit (csi_server.cc).
    if (Status parsed = ParseRequest(); !parsed.ok()) {
      reply.Fail(parsed);
      return;
    }
    if (Status limits = CheckSizeLimits(request_); !limits.ok()) {
      reply.Fail(limits);
      return;
    }
    CanonicalizeIds(&request_);
    NoteRequestIds();
    if (log::Enabled(log::Level::kDebug)) {
      log::Debug("rpc request", {{"method", info_.method},
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

  const Method* method_;
  CallRegistry* registry_;
  grpc::ServerCompletionQueue* cq_;
  Sent sent_{this};
  bool counted_ = false;  // served (not refused): counts as in flight until it ends
  grpc::ServerContext context_;
  grpc::ByteBuffer payload_;  // the request as received; emptied once parsed
  Request request_;
  grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> writer_;
  CallInfo info_;
  CallRecord record_;
};

}  // namespace oxide::rpc
