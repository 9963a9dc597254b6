#include "sim_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/test_environment.h"
#include "support/wait_until.h"
#include "wait_until.h"

namespace sim_test {
namespace {

std::vector<char*> to_argv(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (auto& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  return argv;
}

}  // namespace

std::string SimProcess::binary_path() {
  // The sanitizer steps run these tests against an instrumented simulator.
  const char* override_path = std::getenv("OXIDE_CSI_TEST_SIM_BIN");
  return override_path != nullptr && *override_path != '\0' ? override_path : OXIDE_SIM_BINARY;
}

SimProcess::SimProcess(std::vector<std::string> args) {
  start(std::move(args));
}

void SimProcess::start(std::vector<std::string> args) {
  for (const auto& arg : args)
    tls_ |= arg == "--tls-cert";
  std::vector<std::string> full = {binary_path(), "--port", "0"};
  bool has_token = false;
  for (const auto& arg : args)
    has_token |= arg == "--token" || arg == "--token-file";
  if (!has_token) {
    full.push_back("--token");
    full.push_back(kToken);
  }
  full.insert(full.end(), args.begin(), args.end());
  if (!stderr_path_.empty()) ::unlink(stderr_path_.c_str());  // a restart: a new file
  char templ[] = "/tmp/oxide-sim-stderr-XXXXXX";
  const int err_fd = ::mkstemp(templ);
  stderr_path_ = templ;
  int out_pipe[2];
  ASSERT_EQ(::pipe(out_pipe), 0);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_fd, 2);
    ::close(out_pipe[0]);
    auto argv = to_argv(full);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_fd);
  std::string line;
  char c = 0;
  while (::read(out_pipe[0], &c, 1) == 1 && c != '\n')
    line.push_back(c);
  ::close(out_pipe[0]);
  if (line.empty()) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    FAIL() << "oxide-sim did not print a port; stderr: " << stderr_text();
  }
  port_ = std::stoi(line);
}

SimProcess::~SimProcess() {
  if (pid_ > 0) stop();
  ::unlink(stderr_path_.c_str());
}

std::string SimProcess::base_url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

int SimProcess::stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  // The exit is the event (a pidfd); 5 s is a safety net, not a measured time.
  if (oxide::testing::WaitChildExit(pid_, std::chrono::milliseconds(5000), &status)) {
    pid_ = -1;
    oxide::testing::ExpectNoSanitizerReport(stderr_text(), "oxide-sim");
    return status;
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  ADD_FAILURE() << "oxide-sim did not stop within 5 s of SIGTERM";
  oxide::testing::ExpectNoSanitizerReport(stderr_text(), "oxide-sim");
  return -1;
}

void SimProcess::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  oxide::testing::ExpectNoSanitizerReport(stderr_text(), "oxide-sim");
}

std::string SimProcess::stderr_text() const {
  std::ifstream in(stderr_path_);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

int run_sim_to_exit(const std::vector<std::string>& args, std::string* output) {
  std::vector<std::string> full = {SimProcess::binary_path()};
  full.insert(full.end(), args.begin(), args.end());
  int out_pipe[2];
  if (::pipe(out_pipe) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(out_pipe[1], 2);
    ::close(out_pipe[0]);
    auto argv = to_argv(full);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(out_pipe[0], buffer, sizeof buffer)) > 0)
    output->append(buffer, got);
  ::close(out_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  oxide::testing::ExpectNoSanitizerReport(*output, "oxide-sim");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace sim_test
