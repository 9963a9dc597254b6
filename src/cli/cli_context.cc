#include "cli/cli_context.h"

#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <iostream>

#include "util/status.h"

namespace oxide::cli {
namespace {

// gRPC's codes are the plugin's StatusCode values (util/status.h).
const char* CodeName(grpc::StatusCode code) {
  return StatusCodeName(static_cast<StatusCode>(code));
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
  const auto printed = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!printed.ok()) {
    std::cerr << "error: cannot print the answer as JSON: " << printed.ToString() << "\n";
    return;
  }
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
