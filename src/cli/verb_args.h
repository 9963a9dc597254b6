// The arguments of one oxide-csi-ctl verb (positional, and --flag[=value] options) and how a verb
// prints its answer (text, or JSON with --output=json). Single-threaded CLI.
#pragma once

#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_context.h"
#include "cli/commands.h"

namespace oxide::cli {

// Positional arguments and --flag[=value] options of one verb.
struct VerbArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;

  bool Has(const std::string& flag) const { return options.count(flag) != 0; }
  std::string Get(const std::string& flag, const std::string& fallback = "") const {
    auto found = options.find(flag);
    return found == options.end() ? fallback : found->second;
  }
};

inline VerbArgs Parse(const std::vector<std::string>& args) {
  VerbArgs parsed;
  for (const std::string& arg : args) {
    if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      parsed.options[arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
          eq == std::string::npos ? "" : arg.substr(eq + 1);
    } else {
      parsed.positional.push_back(arg);
    }
  }
  return parsed;
}

inline int Usage(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return kExitUsage;
}

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
