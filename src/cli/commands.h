// The verbs of oxide-csi-ctl, grouped by CSI service. Each service file registers its verbs in
// a table; cli_main dispatches "<service> <verb> [args]" to them.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_context.h"

namespace oxide::cli {

struct Command {
  std::string service;  // "identity", "controller", "node", "snapshot"
  std::string verb;
  std::string usage;  // arguments, e.g. "<volume-id>"
  std::string help;
  std::function<int(const CliContext&, const std::vector<std::string>& args)> run;
};

std::vector<Command> IdentityCommands();
std::vector<Command> ControllerCommands();
std::vector<Command> NodeCommands();
std::vector<Command> SnapshotCommands();

}  // namespace oxide::cli
