#include "support/plugin_process.h"

#include <fcntl.h>
#include <grpcpp/create_channel.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

pid_t Spawn(const std::string& binary, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env, int out_fd, int err_fd) {
  std::vector<std::string> argv_strings{binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  // A PATH in `env` replaces the default one (tests put stand-in commands first).
  std::vector<std::string> env_strings{
      "PATH=" + (env.count("PATH") != 0 ? env.at("PATH") : "/usr/sbin:/usr/bin:/sbin:/bin")};
  // Sanitizer settings reach the programs under test too (suppressions, halt_on_error).
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS"}) {
    if (const char* value = getenv(name)) env_strings.push_back(std::string(name) + "=" + value);
  }
  for (const auto& [key, value] : env) {
    if (key != "PATH") env_strings.push_back(key + "=" + value);
  }
  auto argv = CStrings(argv_strings);
  auto envp = CStrings(env_strings);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, STDIN_FILENO);
    if (out_fd >= 0) dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
    execve(binary.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

bool Connectable(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

}  // namespace

std::string PluginBinary() {
  // The sanitizer jobs point the tests at an instrumented plugin build.
  const char* override_path = getenv("OXIDE_CSI_TEST_PLUGIN_BIN");
  return override_path != nullptr && *override_path != '\0' ? override_path : OXIDE_CSI_PLUGIN_BIN;
}

std::string CtlBinary() {
  const char* override_path = getenv("OXIDE_CSI_TEST_CTL_BIN");
  return override_path != nullptr && *override_path != '\0' ? override_path : OXIDE_CSI_CTL_BIN;
}

ProcessResult RunProgram(const std::string& binary, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env,
                         std::chrono::seconds timeout) {
  TempDir dir;
  int out_fd = open(dir.File("out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int err_fd = open(dir.File("err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = Spawn(binary, args, env, out_fd, err_fd);
  close(out_fd);
  close(err_fd);
  ProcessResult result;
  int status = 0;
  if (!WaitChildExit(pid, timeout, &status)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = ReadFile(dir.File("out"));
  result.err = ReadFile(dir.File("err"));
  ExpectNoSanitizerReport(result.err, binary);
  return result;
}

PluginProcess::PluginProcess(std::vector<std::string> args, std::map<std::string, std::string> env,
                             std::string log_path)
    : log_path_(std::move(log_path)) {
  int err_fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  pid_ = Spawn(PluginBinary(), args, env, err_fd, err_fd);
  close(err_fd);
}

PluginProcess::~PluginProcess() {
  if (running()) {
    kill(pid_, SIGTERM);
    if (WaitExit(std::chrono::seconds(10)) == -1 && running()) {
      kill(pid_, SIGKILL);
      WaitExit();
    }
  }
  ExpectNoSanitizerReport(Log(), "oxide-csi-plugin");
}

bool PluginProcess::running() {
  if (exited_) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
  return !exited_;
}

bool PluginProcess::WaitServing(const std::string& socket_path, std::chrono::milliseconds timeout) {
  bool serving = false;
  WaitUntil([&] { return !running() || (serving = Connectable(socket_path)); }, timeout);
  return serving;
}

void PluginProcess::Signal(int signum) {
  if (running()) kill(pid_, signum);
}

int PluginProcess::WaitExit(std::chrono::milliseconds timeout) {
  if (!exited_ && WaitChildExit(pid_, timeout, &status_)) exited_ = true;
  if (!exited_) return -1;
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

std::string PluginProcess::Log() const {
  return ReadFile(log_path_);
}

bool PluginProcess::WaitForLog(const std::string& text, std::chrono::milliseconds timeout) {
  const int watch = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (watch < 0) return false;
  inotify_add_watch(watch, log_path_.c_str(), IN_MODIFY | IN_CLOSE_WRITE);
  // Readable when the plugin exits; without a pidfd, the wait wakes once a second to notice.
  const int exited = exited_ ? -1 : OpenPidFd(pid_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool found = false;
  // Checked after the watch exists, so a write between the check and the wait is not missed.
  while (!(found = Log().find(text) != std::string::npos) && running()) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd ready[2] = {{watch, POLLIN, 0}, {exited, POLLIN, 0}};  // fd -1 is ignored
    const int64_t wait_ms = exited >= 0 ? left.count() : std::min<int64_t>(left.count(), 1000);
    if (poll(ready, 2, static_cast<int>(std::min<int64_t>(wait_ms, INT_MAX))) > 0 &&
        (ready[0].revents & POLLIN) != 0) {
      char events[4096];
      while (read(watch, events, sizeof events) > 0) {
      }
    }
  }
  if (exited >= 0) close(exited);
  close(watch);
  return found;
}

std::shared_ptr<grpc::Channel> UnixChannel(const std::string& socket_path) {
  return grpc::CreateChannel("unix:" + socket_path, grpc::InsecureChannelCredentials());
}

}  // namespace oxide::testing
