// The store thread: once started, the only user of the SQLite connection. It takes the batches
// queued by Submit() — everything queued since its last commit began — and runs them as one
// transaction (BEGIN IMMEDIATE … COMMIT with SQLite's own fsync, synchronous=FULL; when a write
// fails on its own, the transaction is run again with each batch in a savepoint, so that only
// that batch fails). A commit starts as soon as the previous one is durable, so an idle store
// commits a lone write at once and a busy one lets batches grow to the time an fsync takes (the
// writer queue of LevelDB, PostgreSQL's group commit). The outcome of each transaction is handed
// to `on_done` on the store thread.
//
// Why a thread that owns the connection rather than a loop-thread connection with the fsync done
// elsewhere: SQLite's commit does its own write ordering and syncing (WAL frames, then the sync,
// then the index), and only a connection that runs the whole COMMIT keeps that logic intact. The
// loop keeps the state it reads in memory (MirrorTable) and never waits for this thread.
//
// Idle work (RunWhenIdle: giving freed pages back, truncating the WAL) runs on the store thread
// outside any transaction when no batch is queued; a batch that arrives meanwhile waits for that
// one task only, so each task must be short (bounded chunks).
//
// Submit(), RunWhenIdle() and WaitIdle() from any thread; the constructor and destructor from the
// owner's thread.
#pragma once

#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "store/sqlite_handle.h"
#include "util/status.h"

namespace oxide::store {

// One write, run on the store thread against the connection.
using WriteStep = std::function<Status(sqlite3*)>;

struct WriteBatch {
  uint64_t seq = 0;  // batches are submitted in increasing order
  std::vector<WriteStep> writes;
};

// The outcome of one transaction: batches first_seq..last_seq, each OK or failed.
struct CommitOutcome {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  // A batch whose own write failed was rolled back to its savepoint alone; these are its seqs
  // and errors. When the COMMIT itself failed, `commit` holds the error and every batch failed.
  std::vector<std::pair<uint64_t, Status>> failed_batches;
  Status commit;
  size_t writes = 0;
  double seconds = 0;  // BEGIN to the end of COMMIT
};

class CommitThread {
 public:
  // `db` must not be used by anyone else while this object lives.
  CommitThread(sqlite3* db, std::function<void(CommitOutcome)> on_done);
  // Commits what is queued, then stops the thread.
  ~CommitThread();
  CommitThread(const CommitThread&) = delete;
  CommitThread& operator=(const CommitThread&) = delete;

  void Submit(WriteBatch batch);
  // Runs `task` on the store thread once no batch is queued, outside any transaction. Tasks still
  // queued when the thread stops are dropped (they are maintenance, never a write anyone waits on).
  void RunWhenIdle(std::function<void(sqlite3*)> task);
  // Blocks until every submitted batch is committed and its outcome handed to `on_done`, and
  // every idle task has run.
  void WaitIdle();

 private:
  void Loop();
  CommitOutcome Commit(std::vector<WriteBatch>& batches);
  // One transaction over `batches`; with `savepoints`, a batch whose write fails is undone alone.
  CommitOutcome Attempt(std::vector<WriteBatch>& batches, bool savepoints, bool* a_write_failed);
  Status Run(Statement& statement);  // UNAVAILABLE with SQLite's message when it fails

  sqlite3* db_;
  std::function<void(CommitOutcome)> on_done_;
  // Prepared once on the owner's thread, used only by the store thread afterwards.
  Statement begin_, savepoint_, release_, rollback_to_, commit_, rollback_;

  std::mutex mutex_;
  std::condition_variable work_;                           // a batch was queued, or stop
  std::condition_variable idle_;                           // the queue drained and no commit runs
  std::vector<WriteBatch> queue_;                          // guarded by mutex_
  std::vector<std::function<void(sqlite3*)>> idle_tasks_;  // guarded by mutex_
  bool committing_ = false;  // a commit or an idle task runs; guarded by mutex_
  bool stop_ = false;        // guarded by mutex_
  std::thread thread_;
};

}  // namespace oxide::store
