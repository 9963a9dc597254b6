// What every oxide-csi-ctl command gets: a channel to the CSI endpoint, the per-call timeout, and
// the output format. Single-threaded CLI.
#pragma once

#include <google/protobuf/message.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace oxide::cli {

enum class OutputFormat { kText, kJson };

struct CliContext {
  std::shared_ptr<grpc::Channel> channel;
  std::chrono::milliseconds timeout{30000};
  OutputFormat output = OutputFormat::kText;

  // A client context carrying the timeout as the call's deadline.
  std::unique_ptr<grpc::ClientContext> NewCall() const;
};

// Exit codes of the CLI.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRpcError = 1;
inline constexpr int kExitUsage = 2;

// Prints a failed call as "error: CODE: message" to stderr (or a JSON object with --output json,
// on stdout) and returns kExitRpcError.
int ReportRpcError(const CliContext& context, const grpc::Status& status);

// Prints `message` as JSON (proto field names) on stdout.
void PrintJson(const google::protobuf::Message& message);

// Prints aligned "key: value" lines.
void PrintFields(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace oxide::cli
