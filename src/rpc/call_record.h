// What the per-call log record says about one call besides its method and timing: the answer the
// plugin gave (code, message, where the failure came from) and the ids the call was about. Filled
// by the call object (rpc/unary_call.h) from the request, the response and the Status; written
// by CallRegistry::CallEnded. Loop thread only.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "util/status.h"

namespace oxide::rpc {

struct CallRecord {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string error;
  // From the Status (util/status.h): the cause needs an operator; the Oxide answer behind it.
  bool operator_must_fix = false;
  std::string oxide_request_id;
  std::string oxide_operation;
  // The ids the call is about; empty when the call has none. volume_id is always a volume id
  // (a UUID); an id the CO sent that is not one is kept as requested_volume_id.
  std::string volume_id;
  std::string requested_volume_id;
  std::string volume_name;  // the CO's name (CreateVolume)
  std::string node_id;
  std::string snapshot_id;
  std::string snapshot_name;  // the CO's name (CreateSnapshot)

  void SetOutcome(const Status& status) {
    code = static_cast<grpc::StatusCode>(status.code());
    error = status.message();
    operator_must_fix = status.operator_must_fix();
    oxide_request_id = status.oxide_request_id();
    oxide_operation = status.oxide_operation();
  }
};

// True for the 8-4-4-4-12 hex form of a UUID (any letter case).
inline bool LooksLikeUuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

}  // namespace oxide::rpc
