#include "direct_probe_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

namespace oxide::bench {
namespace {

struct DirectCall {
  DirectCall(csi::v1::Identity::AsyncService* async_service, grpc::ServerCompletionQueue* queue)
      : service(async_service), cq(queue), writer(&context) {
    service->RequestProbe(&context, &request, &writer, cq, cq, this);
  }
  void Proceed(bool ok) {
    if (!answered && ok) {
      new DirectCall(service, cq);
      answered = true;
      csi::v1::ProbeResponse response;
      response.mutable_ready()->set_value(true);
      writer.Finish(response, grpc::Status::OK, this);
      return;
    }
    delete this;
  }
  csi::v1::Identity::AsyncService* service;
  grpc::ServerCompletionQueue* cq;
  grpc::ServerContext context;
  csi::v1::ProbeRequest request;
  grpc::ServerAsyncResponseWriter<csi::v1::ProbeResponse> writer;
  bool answered = false;
};

}  // namespace

DirectProbeServer::DirectProbeServer(const std::string& socket_path) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(&service_);
  cq_ = builder.AddCompletionQueue();
  server_ = builder.BuildAndStart();
  for (int i = 0; i < 8; ++i)
    new DirectCall(&service_, cq_.get());
  thread_ = std::thread([this] {
    void* tag = nullptr;
    bool ok = false;
    while (cq_->Next(&tag, &ok))
      static_cast<DirectCall*>(tag)->Proceed(ok);
  });
}

DirectProbeServer::~DirectProbeServer() {
  server_->Shutdown(std::chrono::system_clock::now());
  cq_->Shutdown();
  thread_.join();
}

}  // namespace oxide::bench
