// Group commit: the writes the loop thread makes go into one SQLite transaction so that many
// calls share one fsync. Commits are paced: at most one per `window`. A transaction begun after
// a quiet spell (the last commit is a window or more ago) commits just before the loop would wait
// for I/O again; one begun sooner commits when the window since the last commit ends. So an
// idle plugin answers without delay, and a busy one batches (each write waits < `window`).
// Under heavy load — the last commit released kBusyWaiters or more waiting callbacks — the window
// doubles: half the fsyncs, and the wait it adds is small beside the queueing such load causes.
// Callers register what must wait for durability (an RPC's answer) with WhenDurable(). Loop
// thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>
#include <vector>

#include "store/sqlite_handle.h"
#include "store/state_db.h"
#include "util/status.h"

namespace oxide::store {

class GroupCommit {
 public:
  GroupCommit(uv_loop_t* loop, StateDb* db,
              std::chrono::milliseconds window = std::chrono::milliseconds(0));
  // Commits what is pending, then closes its loop handle (the loop must run once more).
  ~GroupCommit();
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Opens this turn's transaction unless one is open. Call before every write.
  Status BeginWrite();
  // Runs `done` once everything written so far is committed (OK), or failed to commit (the
  // writes are rolled back and `done` gets the error). Without pending writes it runs at the end
  // of this loop turn with OK.
  void WhenDurable(std::function<void(Status)> done);

  // Commits now (tests and shutdown); the callbacks run before it returns.
  void Flush();

  uint64_t commits() const { return commits_; }
  // A commit releasing at least this many callbacks makes the next window twice as long.
  static constexpr size_t kBusyWaiters = 8;

 private:
  static void OnPrepare(uv_prepare_t* handle);
  static void OnWindowEnd(uv_timer_t* handle);
  void Arm();
  // Commits the open transaction and runs the callbacks waiting for it, again while they write.
  void CommitPending(bool force);

  StateDb* db_;
  std::chrono::milliseconds window_;
  uv_prepare_t* prepare_;     // heap: freed by its close callback, which may run after us
  uv_timer_t* window_timer_;  // likewise
  uv_loop_t* loop_;
  uint64_t last_commit_ms_ = 0;     // uv_now() after the last commit
  size_t last_commit_waiters_ = 0;  // callbacks the last commit released
  bool committed_once_ = false;
  bool window_open_ = false;
  bool in_transaction_ = false;
  bool armed_ = false;
  uint64_t commits_ = 0;
  Statement begin_, commit_;  // prepared once: each write turn runs both
  std::vector<std::function<void(Status)>> waiting_;
};

}  // namespace oxide::store
