// Converts the plugin's Status to the gRPC status the CO receives. Any thread.
#pragma once

#include <grpcpp/support/status.h>

#include "util/status.h"

namespace oxide::rpc {

inline grpc::Status ToGrpc(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), status.message());
}

}  // namespace oxide::rpc
