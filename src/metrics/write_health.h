// Whether the state database takes writes, as the plugin's /healthz reports it (liveness): the
// loop thread records each transaction's outcome and since when the oldest commit still running
// has run (GroupCommit does both); the metrics server's thread asks Check() on every /healthz.
// Recorders: the loop thread only. Check(): any thread. Counters and times are atomics; the
// mutex guards only the last failure's text, taken for a string copy on a failure and by a
// /healthz while commits fail, so a health check never waits for the loop or the database.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "util/status.h"

namespace oxide::metrics {

class WriteHealth {
 public:
  // Loop thread: the outcome of one transaction, in the order they finish. `why` names the
  // database file and SQLite's reason (no secret can be in it: paths and SQLite messages only).
  void Committed();
  void CommitFailed(const std::string& why);
  // Loop thread: when (on the clock Check() is given) the oldest commit still running was handed
  // to the store thread; 0 when none is running.
  void SetRunningSince(int64_t now_ms);

  // Any thread. OK while the database takes writes; otherwise FAILED_PRECONDITION saying what a
  // person can do: the last commit(s) failed (how many in a row, the reason), or a commit has
  // been running for longer than `hung_after_ms` (a hung or very slow disk).
  Status Check(int64_t now_ms, int64_t hung_after_ms) const;

  uint64_t failures_in_a_row() const { return failures_in_a_row_.load(std::memory_order_acquire); }

 private:
  std::atomic<uint64_t> failures_in_a_row_{0};
  std::atomic<int64_t> running_since_ms_{0};
  mutable std::mutex why_mutex_;
  std::string why_;  // guarded by why_mutex_: the last failure's reason
};

}  // namespace oxide::metrics
