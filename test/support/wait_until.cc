#include "support/wait_until.h"

#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <thread>

namespace oxide::testing {

using Clock = std::chrono::steady_clock;

bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds limit,
               std::chrono::milliseconds poll) {
  const auto deadline = Clock::now() + limit;
  while (!condition()) {
    const auto now = Clock::now();
    if (now >= deadline) return condition();
    // The one poll of the tests: used only for events that raise no notification a test can
    // block on (a request reaching the simulator, a row or a file appearing, a device written).
    const auto pause = std::min<Clock::duration>(poll, deadline - now);
    std::this_thread::sleep_for(pause);  // polling: the awaited state raises no notification
  }
  return true;
}

int OpenPidFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

bool WaitPidFdExit(int pidfd, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd exited{pidfd, POLLIN, 0};
    const int ready =
        poll(&exited, 1, static_cast<int>(std::clamp<int64_t>(left.count(), 0, INT_MAX)));
    if (ready > 0) return true;
    if (left.count() <= 0 || (ready < 0 && errno != EINTR)) return false;
  }
}

bool WaitChildExit(pid_t pid, std::chrono::milliseconds limit, int* status) {
  auto reaped = [pid, status] { return waitpid(pid, status, WNOHANG) == pid; };
  auto not_ours = [pid] {
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 &&
           errno == ECHILD;
  };
  if (reaped()) return true;
  if (not_ours()) return false;
  const int pidfd = OpenPidFd(pid);
  if (pidfd < 0) return WaitUntil(reaped, limit);  // no pidfd: kernel < 5.3
  WaitPidFdExit(pidfd, limit);
  close(pidfd);
  return reaped();
}

}  // namespace oxide::testing
