// Runs an external program (blkid, mkfs, fsck) to completion and captures its output. Blocks
// until the program exits: call off the loop thread (uv_queue_work).
#pragma once

#include <string>
#include <vector>

#include "util/status.h"

namespace oxide::node {

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (looked up in PATH) with stdin from /dev/null. Fails only when the program cannot
// be started; a non-zero exit is reported in the result.
StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv);

// "program: <last line of output>" for error messages.
std::string DescribeFailure(const std::vector<std::string>& argv, const CommandResult& result);

}  // namespace oxide::node
