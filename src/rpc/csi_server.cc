#include "rpc/csi_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "rpc/socket_file.h"
#include "util/log.h"

namespace oxide::rpc {

CsiServer::CsiServer(EventLoop* loop, CsiHandlers handlers)
    : loop_(loop),
      handlers_(std::move(handlers))
#define OXIDE_INIT_METHOD(service, name)                                                   \
  , name##_method_{#name, &service##_service_, &csi::v1::service::AsyncService::Request##name, \
                   handlers_.name}
      OXIDE_CSI_ALL_RPCS(OXIDE_INIT_METHOD)
#undef OXIDE_INIT_METHOD
{
}

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

  // The socket is created with the final permissions: never briefly wider than asked.
  mode_t previous_umask = umask(0777 & ~options.socket_mode);
  server_ = builder.BuildAndStart();
  umask(previous_umask);
  if (!server_) {
    return FailedPrecondition("cannot listen on " + options.socket_path +
                              " (is the directory writable?)");
  }
  if (chmod(options.socket_path.c_str(), options.socket_mode) != 0) {
    return FailedPrecondition("cannot set the mode of " + options.socket_path + ": " +
                              std::strerror(errno));
  }
  pump_ = std::make_unique<CompletionPump>(loop_, cq_.get(), [this] { AfterQueueDrained(); });
  ListenAll();
  return Status::Ok();
}

void CsiServer::ListenAll() {
  for (int i = 0; i < options_.listeners_per_method; ++i) {
#define OXIDE_LISTEN(service, name)                                                   \
  UnaryCall<csi::v1::service::AsyncService, csi::v1::name##Request,                   \
            csi::v1::name##Response>::Listen(&name##_method_, &registry_, cq_.get());
    OXIDE_CSI_ALL_RPCS(OXIDE_LISTEN)
#undef OXIDE_LISTEN
  }
}

void CsiServer::Shutdown(std::chrono::milliseconds grace, std::function<void()> done) {
  if (shutting_down_) return;
  shutting_down_ = true;
  done_ = std::move(done);
  registry_.StopAccepting();
  if (!server_) {
    loop_->Post([this] { AfterQueueDrained(); });
    return;
  }
  log::Info("shutting down: no new calls; waiting for calls in flight",
            {{"in_flight", std::to_string(registry_.in_flight())},
             {"grace_ms", std::to_string(grace.count())}});
  // grpc::Server::Shutdown blocks until the calls in flight end, and they end on the loop
  // thread, so it waits on a thread of its own.
  auto deadline = std::chrono::system_clock::now() + grace;
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
    log::Info("server stopped", {{"calls_served", std::to_string(registry_.served())}});
    if (done_) {
      auto done = std::move(done_);
      done();
    }
  });
}

}  // namespace oxide::rpc
