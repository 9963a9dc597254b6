#include "node/command_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace oxide::node {

StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (std::string& arg : copy)
    args.push_back(arg.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    return FailedPrecondition("cannot run " + argv[0] + ": " + std::strerror(rc) +
                              " (is it installed? see README: e2fsprogs, xfsprogs, util-linux)");
  }
  CommandResult result;
  char buffer[4096];
  for (;;) {
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      if (result.output.size() < 64 * 1024) result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string DescribeFailure(const std::vector<std::string>& argv, const CommandResult& result) {
  std::string output = result.output;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' '))
    output.pop_back();
  size_t last_line = output.rfind('\n');
  if (last_line != std::string::npos) output = output.substr(last_line + 1);
  std::string command;
  for (const std::string& arg : argv)
    command += (command.empty() ? "" : " ") + arg;
  return command + " exited with " + std::to_string(result.exit_code) +
         (output.empty() ? "" : ": " + output);
}

}  // namespace oxide::node
