#include "cli/cli_context.h"

#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <iostream>

namespace oxide::cli {
namespace {

const char* CodeName(grpc::StatusCode code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  int index = static_cast<int>(code);
  return index >= 0 && index <= 16 ? kNames[index] : "UNKNOWN";
}

std::string JsonEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::unique_ptr<grpc::ClientContext> CliContext::NewCall() const {
  auto call = std::make_unique<grpc::ClientContext>();
  call->set_deadline(std::chrono::system_clock::now() + timeout);
  return call;
}

int ReportRpcError(const CliContext& context, const grpc::Status& status) {
  if (context.output == OutputFormat::kJson) {
    std::printf("{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n", CodeName(status.error_code()),
                JsonEscape(status.error_message()).c_str());
  } else {
    std::fprintf(stderr, "error: %s: %s\n", CodeName(status.error_code()),
                 status.error_message().c_str());
  }
  return kExitRpcError;
}

void PrintJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  std::cout << json << "\n";
}

void PrintFields(const std::vector<std::pair<std::string, std::string>>& fields) {
  size_t width = 0;
  for (const auto& field : fields)
    width = std::max(width, field.first.size());
  for (const auto& [key, value] : fields) {
    std::cout << key << ":" << std::string(width - key.size() + 1, ' ') << value << "\n";
  }
}

}  // namespace oxide::cli
