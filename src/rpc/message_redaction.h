// Text of a CSI message for debug logs, with every field the CSI spec marks (csi.v1.csi_secret)
// replaced by "[REDACTED]", at any depth. Any thread.
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace oxide::rpc {

std::string RedactedText(const google::protobuf::Message& message);

}  // namespace oxide::rpc
