// Group commit, the loop thread's half: the writes the loop makes during one turn form a batch,
// which is handed to the store thread (CommitThread) just before the loop would wait for I/O.
// The store thread commits everything handed to it since its previous commit in one transaction,
// so batches adapt to load with no timer: idle, a write is committed at once; busy, each commit
// carries what was written while the previous fsync ran. The loop never waits for a commit.
//
// Callers register what must wait for durability (an RPC's answer, an operation's next step)
// with WhenDurable(); it runs on the loop thread once every write made before it is committed,
// or with UNAVAILABLE when the transaction carrying them failed (the writes are then undone in
// the MirrorTables, Probe reports the failure through StateDb::Health and /healthz through the
// WriteHealth it publishes to; from then on, every `heartbeat_period` a one-row write tries the
// disk again, so the failure clears within that time of the disk taking writes again, without
// waiting for a call to write). Stores keep their
// rows in MirrorTables and tell them each batch's outcome through OnBatchDone listeners.
//
// Loop thread only, except as noted; in checked builds (loop/loop_affinity.h) the loop-thread
// entries abort when called from another thread.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "loop/loop_affinity.h"
#include "metrics/write_health.h"
#include "store/commit_thread.h"
#include "store/state_db.h"
#include "util/status.h"

namespace oxide::store {

struct CommitStats {
  uint64_t commits = 0;  // transactions
  uint64_t failed = 0;   // transactions (or batches) that failed
  uint64_t writes = 0;
  uint64_t calls = 0;  // WhenDurable callbacks released by a commit
  double longest_commit_ms = 0;
  double commit_ms = 0;  // all commits together
};

class GroupCommit {
 public:
  // Starts the store thread. `db`'s connection is the store thread's while any batch is
  // outstanding; the loop thread may use db->handle() only when none is: at start-up before the
  // first write (stores prepare statements and read their tables then) and right after Flush().
  // `now_ms`: the clock Health() measures a running commit with (default: the loop's).
  GroupCommit(uv_loop_t* loop, StateDb* db, std::function<uint64_t()> now_ms = nullptr,
              uint64_t heartbeat_period_ms = 500);
  // Commits what is pending (as Flush() does), stops the store thread, logs the figures and closes
  // its loop handles (the loop must run once more to free them). Not checked: the owner may
  // destroy it on another thread once the loop has stopped.
  ~GroupCommit();
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Adds a write to the batch of this loop turn and returns that batch's number (for the
  // MirrorTable that records the change).
  uint64_t Write(WriteStep write);
  // `write` in a batch of its own, handed to the store thread at once (after this turn's writes so
  // far, which go first): when it fails on its own, only `done` hears of it, never a caller whose
  // write would have shared its batch (the journal pruner's step). `done` runs on the loop thread
  // with the batch's outcome.
  void WriteAlone(WriteStep write, std::function<void(Status)> done);
  // Runs `done` once everything written so far is durable (OK) or failed to commit. Without
  // writes of this turn it waits for the newest commit of callers' writes still running (never a
  // WriteAlone batch), or, when none is, runs at the end of this loop turn with OK.
  void WhenDurable(std::function<void(Status)> done);
  // `listener` is called for every batch, in order, once its outcome is known (before the
  // batch's WhenDurable callbacks). Returns an id for RemoveBatchListener. Not checked: stores
  // register in their constructors and unregister in their destructors (BatchListener), which
  // may run on another thread before the loop starts or after it has stopped.
  uint64_t AddBatchListener(std::function<void(uint64_t batch, bool ok)> listener);
  void RemoveBatchListener(uint64_t id);

  // Runs `task` on the store thread when no batch is waiting, outside any transaction (file
  // maintenance: store/file_compaction.h). It must be short: a batch arriving meanwhile waits.
  void RunWhenIdle(std::function<void(sqlite3*)> task);

  // Blocks until everything written so far is committed, the callbacks have run and the idle
  // work queued so far is done (start-up, shutdown and tests). Afterwards, until the next write,
  // the loop thread may read db->handle().
  void Flush();

  // From now on, each commit's outcome and the start of the oldest commit still running are
  // recorded in `health` too, for /healthz on another thread. The start is on the constructor's
  // `now_ms` clock, which must be the one the reader checks against. `health` outlives this
  // object. Not checked: set-up, before the first write and before the loop runs (which may be
  // on another thread, as for the stores' listeners).
  void PublishHealthTo(metrics::WriteHealth* health) { health_ = health; }

  // FAILED_PRECONDITION when a commit has been running for longer than `limit_ms` (a hung disk).
  Status Health(uint64_t limit_ms = 10000) const;
  const CommitStats& stats() const {
    affinity_.Check("GroupCommit::stats");
    return stats_;
  }
  // Batches handed to the store thread whose outcome has not been taken yet.
  size_t batches_in_flight() const {
    affinity_.Check("GroupCommit::batches_in_flight");
    return submitted_.size();
  }

 private:
  friend class BatchListener;  // flushes from its destructor (FlushPending)

  // Hands the open batch to the store thread when it holds writes; `alone`: WriteAlone's.
  void SubmitOpenWrites(bool alone = false);

  struct Batch {
    uint64_t seq = 0;
    uint64_t submitted_ms = 0;  // now_ms_() when handed to the store thread
    std::vector<WriteStep> writes;
    std::vector<std::function<void(Status)>> waiters;
    bool alone = false;  // WriteAlone's batch: no waiter without writes attaches to it
  };

  static void OnPrepare(uv_prepare_t* handle);
  static void OnCommitted(uv_async_t* handle);
  void Arm();
  // Hands the batch of this turn to the store thread; runs waiters that wait for nothing.
  void SubmitOpenBatch();
  void TakeOutcomes();
  void Finish(const CommitOutcome& outcome);
  static void OnHeartbeat(uv_timer_t* timer);
  // Flush() without the thread check, for the destructors (ours and BatchListener's).
  void FlushPending();
  // Tells health_ when the oldest commit still running began (0: none).
  void PublishRunningSince();

  StateDb* db_;
  uv_loop_t* loop_;
  std::function<uint64_t()> now_ms_;
  uv_prepare_t* prepare_;  // heap: freed by its close callback, which may run after us
  uv_async_t* committed_;  // likewise; referenced only while a commit is outstanding
  // Likewise; runs only while the last commit failed. A raw uv timer, not a Clock timer: it is
  // unreferenced (never what keeps the loop running, e.g. at shutdown while the disk is full),
  // which a Clock timer is not, and the node service builds a GroupCommit without a Clock.
  uv_timer_t* heartbeat_;
  uint64_t heartbeat_period_ms_;
  bool armed_ = false;
  Batch open_;
  std::deque<Batch> submitted_;  // handed to the store thread, outcome not yet taken
  std::vector<std::pair<uint64_t, std::function<void(uint64_t, bool)>>> listeners_;
  uint64_t next_listener_ = 1;
  CommitStats stats_;
  metrics::WriteHealth* health_ = nullptr;  // may be null
  LoopAffinity affinity_;

  std::mutex outcomes_mutex_;
  std::vector<CommitOutcome> outcomes_;  // guarded by outcomes_mutex_; from the store thread

  std::unique_ptr<CommitThread> thread_;  // last: stopped first
};

// A store's registration for batch outcomes, held as its last member: on destruction it first
// commits what is pending (while the store's statements still exist), then unregisters.
class BatchListener {
 public:
  BatchListener(GroupCommit* commit, std::function<void(uint64_t batch, bool ok)> listener)
      : commit_(commit), id_(commit->AddBatchListener(std::move(listener))) {}
  ~BatchListener() {
    commit_->FlushPending();
    commit_->RemoveBatchListener(id_);
  }
  BatchListener(const BatchListener&) = delete;
  BatchListener& operator=(const BatchListener&) = delete;

 private:
  GroupCommit* commit_;
  uint64_t id_;
};

}  // namespace oxide::store
