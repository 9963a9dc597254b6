// CSI's size limits, checked on every request before any handler runs (spec, "Size Limits"):
// a string field at most 128 bytes, a map<string,string> at most 4 KiB of keys and values, a
// repeated string (mount_flags) at most 4 KiB in total — except where a field's description
// overrides them: target_path, staging_target_path and volume_path follow the OS's PATH_MAX
// (4096 bytes), and starting_token, which this plugin issued (an Oxide page token), may be up to
// 4 KiB. A violation is INVALID_ARGUMENT naming the field, its size and the limit, never
// echoing the value. Any thread (it only reads the message given).
#pragma once

#include <google/protobuf/message.h>

#include "util/status.h"

namespace oxide::rpc {

inline constexpr size_t kCsiStringLimit = 128;
inline constexpr size_t kCsiMapLimit = 4096;
inline constexpr size_t kPathLimit = 4096;  // PATH_MAX on Linux

Status CheckSizeLimits(const google::protobuf::Message& message);

}  // namespace oxide::rpc
