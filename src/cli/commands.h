// The verbs of oxide-csi-ctl, grouped by CSI service. Each service file declares its verbs (a
// VerbSpec: arguments, flags, help) beside the function that runs them; cli_main parses
// "<group> <verb> [args]" against the declaration and runs the verb. Single-threaded CLI.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/arg_parser.h"
#include "cli/cli_context.h"
#include "cli/verb_spec.h"

namespace oxide::cli {

struct Command {
  VerbSpec spec;
  std::function<int(const CliContext&, const ParsedArgs&)> run;
};

std::vector<Command> IdentityCommands();
std::vector<Command> ControllerCommands();
std::vector<Command> NodeCommands();
std::vector<Command> SnapshotCommands();

}  // namespace oxide::cli
