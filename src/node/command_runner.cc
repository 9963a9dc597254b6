#include "node/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

extern char** environ;

namespace oxide::node {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kOutputCap = 64 * 1024;
// How long a killed program may take to exit before a detached thread is left to reap it.
constexpr std::chrono::milliseconds kKillGrace{5000};

// Reads what `fd` (non-blocking) holds; false once the write end is closed everywhere.
bool Drain(int fd, std::string* output) {
  char buffer[4096];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      size_t room = kOutputCap - std::min(kOutputCap, output->size());
      output->append(buffer, std::min(room, static_cast<size_t>(n)));
    } else if (n == 0) {
      return false;
    } else if (errno != EINTR) {
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
  }
}

int PollMillis(Clock::duration remaining) {
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(remaining).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, INT_MAX));
}

// A pidfd of our child `pid` (readable once it has exited), or -1 on kernels without pidfds.
int OpenPidFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

bool WaitReadable(int fd, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    pollfd entry{fd, POLLIN, 0};
    int rc = poll(&entry, 1, PollMillis(deadline - Clock::now()));
    if (rc > 0) return true;
    if (rc == 0 || errno != EINTR) return false;
  }
}

// Kills the process group of `pid` (the child leads it and is not reaped yet, so the group id
// cannot have been reused) and reaps the child. False when it did not exit within kKillGrace:
// a detached thread reaps it whenever it does.
bool KillGroupAndReap(pid_t pid, int pidfd, int* status) {
  kill(-pid, SIGKILL);
  if (pidfd >= 0 && !WaitReadable(pidfd, kKillGrace)) {
    std::thread([pid] {
      int ignored = 0;
      while (waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
      }
    }).detach();
    return false;
  }
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
  return true;
}

std::string Seconds(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000);
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(duration.count()) / 1000.0);
  return text;
}

// `input_fd` < 0: stdin from /dev/null.
StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, int input_fd, int output_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (input_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, input_fd, STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, output_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output_fd, STDERR_FILENO);
  // Its own process group (to kill it with everything it started), no signal blocked or ignored
  // that the plugin blocks or ignores.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t signals;
  sigemptyset(&signals);
  posix_spawnattr_setsigmask(&attributes, &signals);
  for (int signal : {SIGPIPE, SIGHUP, SIGINT, SIGQUIT, SIGTERM})
    sigaddset(&signals, signal);
  posix_spawnattr_setsigdefault(&attributes, &signals);
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (std::string& arg : copy)
    args.push_back(arg.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return FailedPrecondition("cannot run " + argv[0] + ": " + std::strerror(rc) +
                              " (is it installed? see README: e2fsprogs, xfsprogs, util-linux)");
  }
  return pid;
}

// The read end of a pipe that holds `input` and whose write end is closed (the pipe's buffer,
// 64 KiB, holds kMaxCommandInput: the write never blocks).
StatusOr<int> InputPipe(const std::string& input) {
  if (input.size() > kMaxCommandInput) {
    return InvalidArgument("a command's input is limited to " + std::to_string(kMaxCommandInput) +
                           " bytes");
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  size_t written = 0;
  while (written < input.size()) {
    ssize_t n = write(fds[1], input.data() + written, input.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      close(fds[0]);
      close(fds[1]);
      return Internal(std::string("writing a command's input: ") + std::strerror(error));
    }
    written += static_cast<size_t>(n);
  }
  close(fds[1]);
  return fds[0];
}

// How collecting a child's output ended.
struct Collected {
  bool exited = false;   // its pidfd said so
  bool expired = false;  // the deadline passed first
  int poll_error = 0;    // poll failed with this errno
};

// Reads the child's output (`output_fd`, non-blocking) into *output as it comes, until the child
// exits (or, without a pidfd, closes its output), the deadline passes, or poll fails.
Collected CollectOutput(int output_fd, int pidfd, Clock::time_point deadline, std::string* output) {
  Collected collected;
  bool pipe_open = true;
  while (!collected.exited && (pipe_open || pidfd >= 0)) {
    const auto remaining = deadline - Clock::now();
    if (remaining <= Clock::duration::zero()) {
      collected.expired = true;
      break;
    }
    pollfd fds[2] = {{pipe_open ? output_fd : -1, POLLIN, 0}, {pidfd, POLLIN, 0}};
    int rc = poll(fds, pidfd >= 0 ? 2 : 1, PollMillis(remaining));
    if (rc < 0 && errno != EINTR) {
      collected.poll_error = errno;
      break;
    }
    if (rc <= 0) continue;
    if (fds[0].revents != 0) pipe_open = Drain(output_fd, output);
    if (pidfd >= 0 && fds[1].revents != 0) collected.exited = true;
  }
  if (collected.exited && pipe_open) Drain(output_fd, output);  // written before it exited
  return collected;
}

// Reaps the child into *status: kills its process group first when it exited (its group may
// live on), ran out of time or could not be watched; else (no pidfd: its output closed) waits
// for the exit that follows. False when it has not exited even after the kill.
bool Reap(pid_t pid, int pidfd, const Collected& collected, int* status) {
  if (collected.exited || collected.expired || collected.poll_error != 0) {
    return KillGroupAndReap(pid, pidfd, status);
  }
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
  return true;
}

}  // namespace

StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout, const std::string* input) {
  if (argv.empty()) return InvalidArgument("RunCommand: no program given");
  const auto deadline = Clock::now() + timeout;
  int input_fd = -1;
  if (input != nullptr) {
    StatusOr<int> piped = InputPipe(*input);
    if (!piped.ok()) return piped.status();
    input_fd = *piped;
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    if (input_fd >= 0) close(input_fd);
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  fcntl(pipe_fds[0], F_SETFL, fcntl(pipe_fds[0], F_GETFL) | O_NONBLOCK);
  StatusOr<pid_t> spawned = Spawn(argv, input_fd, pipe_fds[1]);
  close(pipe_fds[1]);
  if (input_fd >= 0) close(input_fd);
  if (!spawned.ok()) {
    close(pipe_fds[0]);
    return spawned.status();
  }
  const pid_t pid = *spawned;
  const int pidfd = OpenPidFd(pid);
  CommandResult result;
  const Collected collected = CollectOutput(pipe_fds[0], pidfd, deadline, &result.output);
  close(pipe_fds[0]);
  int status = 0;
  const bool reaped = Reap(pid, pidfd, collected, &status);
  if (pidfd >= 0) close(pidfd);
  const bool expired = collected.expired;
  const int poll_error = collected.poll_error;
  if (expired) {
    return DeadlineExceeded(CommandLine(argv) + " did not finish within " + Seconds(timeout) +
                            " s; it was killed with its process group" +
                            (reaped ? "" : " (it has not exited yet: stuck in the kernel?)"));
  }
  if (poll_error != 0) {
    return Internal("waiting for " + CommandLine(argv) + ": " + std::strerror(poll_error) +
                    "; it was killed with its process group");
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string command;
  for (const std::string& arg : argv)
    command += (command.empty() ? "" : " ") + arg;
  return command;
}

std::string DescribeFailure(const std::vector<std::string>& argv, const CommandResult& result) {
  std::string output = result.output;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' '))
    output.pop_back();
  size_t last_line = output.rfind('\n');
  if (last_line != std::string::npos) output = output.substr(last_line + 1);
  return CommandLine(argv) + " exited with " + std::to_string(result.exit_code) +
         (output.empty() ? "" : ": " + output);
}

}  // namespace oxide::node
