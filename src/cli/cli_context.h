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

#include "cli/verb_spec.h"

namespace oxide::cli {

enum class OutputFormat { kText, kJson };

struct CliContext {
  std::shared_ptr<grpc::Channel> channel;
  std::chrono::milliseconds timeout{30000};
  OutputFormat output = OutputFormat::kText;
  std::string endpoint;            // as given, e.g. "unix:///run/csi/csi.sock"
  std::string socket_path;         // the file it names
  const VerbSpec* verb = nullptr;  // the verb being run (maps protocol fields to its flags)

  // A client context carrying the timeout as the call's deadline.
  std::unique_ptr<grpc::ClientContext> NewCall() const;
};

// Exit codes of the CLI.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRpcError = 1;
inline constexpr int kExitUsage = 2;

// Prints a failed call as "error: CODE: message" to stderr (or a JSON object with --output json,
// on stdout) and returns kExitRpcError. When the plugin cannot be reached it says so (and why);
// an INVALID_ARGUMENT message naming protocol fields names the verb's flags instead.
int ReportRpcError(const CliContext& context, const grpc::Status& status);

// Prints `message` as JSON (proto field names) on stdout.
void PrintJson(const google::protobuf::Message& message);

// `message` with every protocol field of `verb` replaced by its flag or <argument>, and the
// replaced fields listed at the end: "staging_target_path is required" ->
// "--staging-path is required (staging_target_path)".
std::string FieldsToFlags(const std::string& message, const VerbSpec& verb);

// Why nothing answers on `socket_path` ("" when something accepts connections there).
std::string UnreachableReason(const std::string& socket_path);

// Prints aligned "key: value" lines.
void PrintFields(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace oxide::cli
