// oxide-csi-ctl: a command-line client for any CSI endpoint (like csc for Go drivers).
//   oxide-csi-ctl [--endpoint EP] [--output text|json] [--timeout SECONDS] <group> <verb> [args]
// Every argument is read by one parser (cli/arg_parser.h) against the verbs' declarations; a bad
// invocation exits 2 before anything is sent, and no exception leaves main.
#include <grpcpp/create_channel.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "cli/arg_parser.h"
#include "cli/commands.h"
#include "cli/help_text.h"
#include "config/validation.h"
#include "version.h"

namespace oxide::cli {
namespace {

constexpr uint64_t kMaxTimeoutSeconds = 24 * 3600;

VerbSpec GlobalSpec() {
  FlagSpec output = StringFlag("output", "FORMAT", "How answers are printed.");
  output.choices = {"text", "json"};
  return {
      .help =
          "A command-line CSI client for the Oxide CSI plugin (or any CSI endpoint): each "
          "verb is one CSI call.",
      .flags = {StringFlag("endpoint", "unix:///PATH",
                           "The plugin's CSI socket; defaults to $CSI_ENDPOINT."),
                output,
                NumberFlag("timeout", "SECONDS", 1, kMaxTimeoutSeconds, "seconds",
                           "The deadline of the call (default 30)."),
                BoolFlag("help", "Print this help."), BoolFlag("version", "Print the version.")}};
}

std::vector<Command> AllCommands() {
  std::vector<Command> all = IdentityCommands();
  for (auto* group : {&ControllerCommands, &NodeCommands, &SnapshotCommands}) {
    for (Command& command : (*group)())
      all.push_back(std::move(command));
  }
  return all;
}

std::vector<VerbSpec> Specs(const std::vector<Command>& commands, const std::string& group = "") {
  std::vector<VerbSpec> specs;
  for (const Command& command : commands) {
    if (group.empty() || command.spec.group == group) specs.push_back(command.spec);
  }
  return specs;
}

int UsageError(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return kExitUsage;
}

std::string Names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

// Moves the global flags found among a verb's arguments (before a "--") into `globals`, so that
// `controller list --output json` works like `--output json controller list`. A flag the verb
// declares itself stays the verb's.
std::vector<std::string> TakeGlobalFlags(const VerbSpec& global, const VerbSpec& verb,
                                         std::vector<std::string> args,
                                         std::vector<std::string>* globals) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      kept.insert(kept.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    const std::string name = arg.rfind("--", 0) == 0 ? arg.substr(2, arg.find('=') - 2) : "";
    const FlagSpec* flag = name.empty() ? nullptr : global.FindFlag(name);
    if (flag == nullptr || verb.FindFlag(name) != nullptr) {
      kept.push_back(arg);
      continue;
    }
    globals->push_back(arg);
    const bool takes_next = flag->kind != FlagKind::kBool && arg.find('=') == std::string::npos;
    if (takes_next && i + 1 < args.size()) globals->push_back(args[++i]);
  }
  return kept;
}

// A --help among a verb's arguments (before a "--").
bool AsksForHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

// The command `rest` names (<group> <verb> ...), or nullptr when there is none to run: then the
// help asked for is printed, or the usage error, and *exit_code says how to exit.
const Command* FindCommand(const std::vector<Command>& commands,
                           const std::vector<std::string>& rest, bool help, int* exit_code) {
  const std::string& group = rest[0];
  std::vector<std::string> groups;
  std::vector<std::string> verbs;
  for (const Command& command : commands) {
    if (std::find(groups.begin(), groups.end(), command.spec.group) == groups.end()) {
      groups.push_back(command.spec.group);
    }
    if (command.spec.group == group) verbs.push_back(command.spec.verb);
  }
  if (verbs.empty()) {
    *exit_code = UsageError("unknown group \"" + group + "\"; the groups: " + Names(groups));
    return nullptr;
  }
  if (rest.size() == 1 || rest[1].rfind("-", 0) == 0) {
    if (help) {
      PrintVerbsHelp(std::cout, Specs(commands, group));
      *exit_code = kExitOk;
    } else {
      *exit_code = UsageError(group + ": missing <verb>; the " + group + " verbs: " + Names(verbs));
    }
    return nullptr;
  }
  const std::string& verb = rest[1];
  auto command = std::find_if(commands.begin(), commands.end(), [&](const Command& c) {
    return c.spec.group == group && c.spec.verb == verb;
  });
  if (command == commands.end()) {
    *exit_code = UsageError("unknown verb \"" + group + " " + verb + "\"; the " + group +
                            " verbs: " + Names(verbs));
    return nullptr;
  }
  if (help) {
    PrintVerbsHelp(std::cout, {command->spec});
    *exit_code = kExitOk;
    return nullptr;
  }
  return &*command;
}

// Parses the verb's arguments (rest[2...]) into *verb_args. Global flags given among them are
// parsed again into *globals together with those before the verb. Returns "" or the message.
std::string ParseVerbArgs(const VerbSpec& global, const VerbSpec& verb,
                          const std::vector<std::string>& args,
                          const std::vector<std::string>& rest, ParseOutcome* globals,
                          ParsedArgs* verb_args) {
  std::vector<std::string> late_globals;
  ParseOutcome parsed = ParseArgs(
      verb, TakeGlobalFlags(global, verb, std::vector<std::string>(rest.begin() + 2, rest.end()),
                            &late_globals));
  if (!parsed.ok()) return parsed.error;
  *verb_args = std::move(parsed.args);
  if (late_globals.empty()) return "";
  std::vector<std::string> all_globals(args.begin(),
                                       args.end() - static_cast<std::ptrdiff_t>(rest.size()));
  all_globals.insert(all_globals.end(), late_globals.begin(), late_globals.end());
  *globals = ParseArgs(global, all_globals, ParseMode::kUntilPositional);
  return globals->error;
}

// The context a command runs with, from the global flags and $CSI_ENDPOINT; "" or the message.
std::string MakeContext(const ParsedArgs& flags, const Command& command, CliContext* context) {
  if (flags.Has("output")) {
    context->output = flags.Get("output") == "json" ? OutputFormat::kJson : OutputFormat::kText;
  }
  if (flags.Has("timeout")) {
    context->timeout = std::chrono::seconds(flags.Number("timeout"));
  }
  const char* env_endpoint = std::getenv("CSI_ENDPOINT");
  context->endpoint = flags.Get("endpoint", env_endpoint != nullptr ? env_endpoint : "");
  if (context->endpoint.empty()) {
    return "no endpoint: pass --endpoint unix:///PATH or set CSI_ENDPOINT";
  }
  auto socket_path = SocketPathFromEndpoint(context->endpoint);
  if (!socket_path.ok()) return "--endpoint: " + socket_path.status().message();
  context->socket_path = *socket_path;
  context->verb = &command.spec;
  context->channel =
      grpc::CreateChannel("unix:" + *socket_path, grpc::InsecureChannelCredentials());
  return "";
}

int Run(const std::vector<std::string>& args) {
  const VerbSpec global = GlobalSpec();
  const std::vector<Command> commands = AllCommands();
  ParseOutcome globals = ParseArgs(global, args, ParseMode::kUntilPositional);
  if (!globals.ok()) return UsageError(globals.error);
  if (globals.args.Has("version")) {
    std::cout << "oxide-csi-ctl " << kVersion << "\n";
    return kExitOk;
  }
  const std::vector<std::string> rest = globals.args.rest;  // `globals` may be parsed again
  const bool help = globals.args.Has("help") || AsksForHelp(rest);
  if (rest.empty()) {
    if (help) {
      PrintMainHelp(std::cout, global, Specs(commands));
      return kExitOk;
    }
    return UsageError("expected <group> <verb> (see oxide-csi-ctl --help)");
  }
  int exit_code = kExitOk;
  const Command* command = FindCommand(commands, rest, help, &exit_code);
  if (command == nullptr) return exit_code;
  ParsedArgs verb_args;
  std::string error = ParseVerbArgs(global, command->spec, args, rest, &globals, &verb_args);
  if (!error.empty()) return UsageError(error);
  CliContext context;
  error = MakeContext(globals.args, *command, &context);
  if (!error.empty()) return UsageError(error);
  return command->run(context, verb_args);
}

}  // namespace
}  // namespace oxide::cli

int main(int argc, char** argv) {
  try {
    return oxide::cli::Run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
  } catch (...) {
    std::cerr << "error: an unexpected failure\n";
  }
  return oxide::cli::kExitRpcError;
}
