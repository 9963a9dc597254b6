// Waiting for events in tests, with a time limit as a safety net only: a condition checked until
// it holds (for events that raise no notification a test can block on, e.g. a request reaching
// the simulator or a row appearing), and the exit of a process (blocking on a pidfd).
// Any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>

namespace oxide::testing {

// Checks `condition` until it holds or `limit` has passed; true when it held. It is checked at
// least once, and once more at the limit. `poll` is the pause between checks.
bool WaitUntil(const std::function<bool()>& condition,
               std::chrono::milliseconds limit = std::chrono::seconds(15),
               std::chrono::milliseconds poll = std::chrono::milliseconds(5));

// A pidfd of `pid` (readable once it has exited; Linux >= 5.3), or -1 when the kernel has none
// or the process is gone. The caller closes it.
int OpenPidFd(pid_t pid);

// Waits until the process of `pidfd` (any process, not only a child of ours) has exited: it
// holds no file any more. Blocks in poll(2). False when `limit` passed first.
bool WaitPidFdExit(int pidfd, std::chrono::milliseconds limit);

// Waits until the child `pid` exits and reaps it into *status. Blocks in poll(2) on a pidfd;
// where there is none, checks with WaitUntil. False when `limit` passed first, or when `pid` is
// not a child of ours (any more).
bool WaitChildExit(pid_t pid, std::chrono::milliseconds limit, int* status);

}  // namespace oxide::testing
