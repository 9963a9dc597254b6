// oxide-csi-ctl: a command-line client for any CSI endpoint (like csc for Go drivers).
//   oxide-csi-ctl [--endpoint EP] [--output text|json] [--timeout SECONDS] <service> <verb> [args]
#include <grpcpp/create_channel.h>

#include <charconv>
#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "config/validation.h"
#include "version.h"

namespace oxide::cli {
namespace {

std::vector<Command> AllCommands() {
  std::vector<Command> all = IdentityCommands();
  for (Command& command : ControllerCommands())
    all.push_back(std::move(command));
  for (Command& command : NodeCommands())
    all.push_back(std::move(command));
  for (Command& command : SnapshotCommands())
    all.push_back(std::move(command));
  return all;
}

void PrintUsage(std::ostream& out) {
  out << "Usage: oxide-csi-ctl [--endpoint unix:///path.sock] [--output text|json] "
         "[--timeout SECONDS] <service> <verb> [args]\n\n"
         "The endpoint defaults to $CSI_ENDPOINT. Exit codes: 0 ok, 1 the call failed, 2 usage.\n\n"
         "Commands:\n";
  for (const Command& command : AllCommands()) {
    std::string left = "  " + command.service + " " + command.verb;
    if (!command.usage.empty()) left += " " + command.usage;
    out << left << std::string(left.size() < 44 ? 44 - left.size() : 1, ' ') << command.help
        << "\n";
  }
}

int UsageError(const std::string& message) {
  std::cerr << "oxide-csi-ctl: " << message << " (see --help)\n";
  return kExitUsage;
}

}  // namespace

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  CliContext context;
  const char* env_endpoint = std::getenv("CSI_ENDPOINT");
  std::string endpoint = env_endpoint != nullptr ? env_endpoint : "";

  size_t i = 0;
  for (; i < args.size() && args[i].rfind("--", 0) == 0; ++i) {
    std::string flag = args[i];
    std::string value;
    if (auto eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (flag != "--help" && flag != "--version") {
      if (i + 1 >= args.size()) return UsageError(flag + " needs a value");
      value = args[++i];
    }
    if (flag == "--help") {
      PrintUsage(std::cout);
      return kExitOk;
    } else if (flag == "--version") {
      std::cout << "oxide-csi-ctl " << kVersion << "\n";
      return kExitOk;
    } else if (flag == "--endpoint") {
      endpoint = value;
    } else if (flag == "--output") {
      if (value == "json")
        context.output = OutputFormat::kJson;
      else if (value == "text")
        context.output = OutputFormat::kText;
      else
        return UsageError("--output must be text or json");
    } else if (flag == "--timeout") {
      double seconds = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (ec != std::errc() || end != value.data() + value.size() || seconds <= 0) {
        return UsageError("--timeout must be a positive number of seconds");
      }
      context.timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    } else {
      return UsageError("unknown flag " + flag);
    }
  }
  if (args.size() - i < 2) return UsageError("expected <service> <verb>");
  const std::string& service = args[i];
  const std::string& verb = args[i + 1];
  std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(i) + 2, args.end());

  if (endpoint.empty()) return UsageError("no endpoint: pass --endpoint or set CSI_ENDPOINT");
  auto socket_path = SocketPathFromEndpoint(endpoint);
  if (!socket_path.ok()) return UsageError("bad endpoint: " + socket_path.status().message());
  context.channel = grpc::CreateChannel("unix:" + *socket_path, grpc::InsecureChannelCredentials());

  for (const Command& command : AllCommands()) {
    if (command.service == service && command.verb == verb) return command.run(context, rest);
  }
  return UsageError("unknown command \"" + service + " " + verb + "\"");
}

}  // namespace oxide::cli

int main(int argc, char** argv) {
  return oxide::cli::Main(argc, argv);
}
