// Baseline for measuring the loop handoff: an async gRPC server whose completion-queue thread
// answers Probe itself, without handing the call to the libuv loop. Benchmarks only.
#pragma once

#include <grpcpp/server.h>

#include <memory>
#include <string>
#include <thread>

#include "csi.grpc.pb.h"

namespace oxide::bench {

class DirectProbeServer {
 public:
  explicit DirectProbeServer(const std::string& socket_path);
  ~DirectProbeServer();

 private:
  csi::v1::Identity::AsyncService service_;
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::unique_ptr<grpc::Server> server_;
  std::thread thread_;
};

}  // namespace oxide::bench
