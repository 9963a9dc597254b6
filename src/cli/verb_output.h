// How a verb prints its answer: text, or JSON with --output=json; failed calls through
// ReportRpcError. Single-threaded CLI.
#pragma once

#include <google/protobuf/map.h>

#include <functional>
#include <string>

#include "cli/cli_context.h"

namespace oxide::cli {

template <typename Response>
int Print(const CliContext& context, const grpc::Status& status, const Response& response,
          const std::function<void()>& print_text) {
  if (!status.ok()) return ReportRpcError(context, status);
  if (context.output == OutputFormat::kJson) {
    PrintJson(response);
  } else {
    print_text();
  }
  return kExitOk;
}

inline std::string JoinMap(const google::protobuf::Map<std::string, std::string>& map) {
  std::string text;
  for (const auto& [key, value] : map)
    text += (text.empty() ? "" : ", ") + key + "=" + value;
  return text;
}

}  // namespace oxide::cli
