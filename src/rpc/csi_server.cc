#include "rpc/csi_server.h"

#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "rpc/socket_file.h"
#include "util/log.h"

namespace oxide::rpc {
namespace {

// The largest CSI request within the spec's size limits is ~25 KiB (NodePublishVolume: four
// 4 KiB maps, 4 KiB of mount flags, two paths); gRPC's default would buffer 4 MB per call.
constexpr int kMaxRequestBytes = 64 * 1024;
// Memory gRPC may take for the calls it is receiving and answering, all together; beyond it,
// gRPC refuses new work (RESOURCE_EXHAUSTED) instead of growing.
constexpr size_t kServerMemoryBytes = 32 * 1024 * 1024;

}  // namespace

// clang-format off
CsiServer::CsiServer(EventLoop* loop, CsiHandlers handlers)
    : loop_(loop),
      handlers_(std::move(handlers))
#define OXIDE_INIT_METHOD(service, name) \
      , name##_method_{#name, &service##_service_, \
                       &Raw##service##Service::Request##name, handlers_.name}
      OXIDE_CSI_ALL_RPCS(OXIDE_INIT_METHOD)
#undef OXIDE_INIT_METHOD
{}
// clang-format on

CsiServer::~CsiServer() {
  if (stopper_.joinable()) stopper_.join();
}

Status CsiServer::Start(const ServerOptions& options) {
  options_ = options;
  Status prepared = PrepareSocketPath(options.socket_path);
  if (!prepared.ok()) return prepared;

  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + options.socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(&Identity_service_);
  builder.RegisterService(&Controller_service_);
  builder.RegisterService(&Node_service_);
  cq_ = builder.AddCompletionQueue();
  builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
  grpc::ResourceQuota quota("csi-server");
  quota.Resize(kServerMemoryBytes);
  builder.SetResourceQuota(quota);

  // The socket is created with the final permissions: never briefly wider than asked.
  mode_t previous_umask = umask(0777 & ~options.socket_mode);
  server_ = builder.BuildAndStart();
  umask(previous_umask);
  if (!server_) {
    return FailedPrecondition("cannot listen on " + options.socket_path +
                              " (is the directory writable?)");
  }
  if (chmod(options.socket_path.c_str(), options.socket_mode) != 0) {
    Status failed = FailedPrecondition("cannot set the mode of " + options.socket_path + ": " +
                                       std::strerror(errno));
    // Nothing was queued yet: stop gRPC and empty the queue so both can be destroyed.
    server_->Shutdown();
    cq_->Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq_->Next(&tag, &ok)) {
    }
    server_.reset();
    RemoveSocketFile(options.socket_path);
    return failed;
  }
  pump_ = std::make_unique<CompletionPump>(
      loop_, cq_.get(), [this] { AfterQueueDrained(); }, options.pump_spin);
  ListenAll();
  return Status::Ok();
}

void CsiServer::ListenAll() {
  for (int i = 0; i < options_.listeners_per_method; ++i) {
#define OXIDE_LISTEN(service, name)                                                          \
  UnaryCall<Raw##service##Service, csi::v1::name##Request, csi::v1::name##Response>::Listen( \
      &name##_method_, &registry_, cq_.get());
    OXIDE_CSI_ALL_RPCS(OXIDE_LISTEN)
#undef OXIDE_LISTEN
  }
}

void CsiServer::Shutdown(std::chrono::milliseconds grace, std::function<void()> done) {
  if (shutting_down_) return;
  shutting_down_ = true;
  done_ = std::move(done);
  if (!server_) {
    loop_->Post([this] { AfterQueueDrained(); });
    return;
  }
  log::Info("shutting down: refusing new calls, waiting for calls in flight",
            {{"in_flight", log::Num(registry_.in_flight())},
             {"grace_ms", log::Num(static_cast<int64_t>(grace.count()))}});
  grace_timer_ = new uv_timer_t;
  uv_timer_init(loop_->uv(), grace_timer_);
  grace_timer_->data = this;
  uv_timer_start(
      grace_timer_,
      [](uv_timer_t* timer) {
        auto* self = static_cast<CsiServer*>(timer->data);
        log::Warn("grace period over: cancelling the calls still in flight",
                  {{"in_flight", log::Num(self->registry_.in_flight())}});
        self->StopGrpcServer();
      },
      static_cast<uint64_t>(grace.count()), 0);
  registry_.StopAccepting([this] { StopGrpcServer(); });
}

void CsiServer::StopGrpcServer() {
  if (grpc_stopping_) return;
  grpc_stopping_ = true;
  uv_timer_stop(grace_timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(grace_timer_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_timer_t*>(handle); });
  grace_timer_ = nullptr;
  // Nothing of ours is in flight now (or the grace is over). grpc::Server::Shutdown would also
  // wait for idle client connections, which a CO keeps open, so give it only a short deadline:
  // enough for a call that raced the shutdown to be refused, then connections are closed.
  // It blocks, and calls end on the loop thread, so it runs on a thread of its own.
  auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds(200);
  registry_.GrpcStopping();
  stopper_ = std::thread([this, deadline] {
    server_->Shutdown(deadline);
    loop_->Post([this] { CloseQueue(); });
  });
}

void CsiServer::CloseQueue() {
  // On the loop thread, where every Finish() happens: no answer can race the queue's shutdown.
  registry_.CloseQueue();
  cq_->Shutdown();
}

void CsiServer::AfterQueueDrained() {
  // Runs inside the pump's callback: release the pump on the next loop turn.
  loop_->Post([this] {
    if (stopper_.joinable()) stopper_.join();
    pump_.reset();
    RemoveSocketFile(options_.socket_path);
    log::Info("server stopped", {{"calls_served", log::Num(registry_.served())}});
    if (done_) {
      auto done = std::move(done_);
      done();
    }
  });
}

}  // namespace oxide::rpc
