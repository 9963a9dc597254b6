// Runs an external program (blkid, mkfs, fsck, tune2fs, xfs_db, xfs_repair) under a time limit and
// captures its output. Blocks until the program exits or its time is up: call off the loop thread
// (uv_queue_work); any number of worker threads may run commands at once.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "util/status.h"

namespace oxide::node {

// How long the node lets external commands run before it kills them.
struct CommandLimits {
  std::chrono::milliseconds format{std::chrono::minutes(10)};  // mkfs
  // fsck before a mount: a large filesystem used elsewhere may need a long repair, and one killed
  // at every retry would never finish.
  std::chrono::milliseconds check{std::chrono::minutes(10)};
  std::chrono::milliseconds command{std::chrono::seconds(60)};  // blkid, tune2fs, xfs_db
};

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string output;  // stdout and stderr, interleaved; the first 64 KiB
};

// Runs argv[0] (looked up in PATH) with stdin from /dev/null, or, when `input` is given, from a
// pipe that holds `input` and then ends (at most kMaxCommandInput bytes: secrets such as a LUKS
// passphrase travel this way, never on the command line or in a file), in a process group of its
// own.
// A non-zero exit is reported in the result; FAILED_PRECONDITION when the program cannot be
// started. When it has not exited within `timeout`, its whole process group is killed (SIGKILL)
// and DEADLINE_EXCEEDED returned. Whatever the program left running in its group when it exits is
// killed too. A program stuck in the kernel (a hung device ignores SIGKILL until the I/O ends) is
// waited for a few seconds after the kill, then left to a detached thread to reap.
inline constexpr size_t kMaxCommandInput = 16 * 1024;
StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout,
                                   const std::string* input = nullptr);

// "program args exited with N: <last line of output>" for error messages.
std::string DescribeFailure(const std::vector<std::string>& argv, const CommandResult& result);

// The command line, arguments separated by spaces (for messages).
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace oxide::node
