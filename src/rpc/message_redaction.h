// Text of a CSI message for debug logs, without any field the CSI spec marks csi.v1.csi_secret
// (at any depth): each such field is left out and named as "secrets (N entries): [REDACTED]".
// Any thread.
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace oxide::rpc {

std::string RedactedText(const google::protobuf::Message& message);

}  // namespace oxide::rpc
