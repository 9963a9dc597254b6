#include "store/commit_thread.h"

#include <pthread.h>

#include <chrono>
#include <utility>

#include "metrics/plugin_metrics.h"

namespace oxide::store {

CommitThread::CommitThread(sqlite3* db, std::function<void(CommitOutcome)> on_done)
    : db_(db),
      on_done_(std::move(on_done)),
      begin_(db, "BEGIN IMMEDIATE"),
      savepoint_(db, "SAVEPOINT batch"),
      release_(db, "RELEASE batch"),
      rollback_to_(db, "ROLLBACK TO batch"),
      commit_(db, "COMMIT"),
      rollback_(db, "ROLLBACK") {
  thread_ = std::thread([this] { Loop(); });
  pthread_setname_np(thread_.native_handle(), "state-db-commit");
  // SCHED_BATCH, as the gRPC pump thread: woken by the loop's hand-over, it does not preempt the
  // loop thread but runs when the loop waits or on the other CPU. Needs no privilege.
  sched_param normal_priority{};
  pthread_setschedparam(thread_.native_handle(), SCHED_BATCH, &normal_priority);
}

CommitThread::~CommitThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void CommitThread::Submit(WriteBatch batch) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wake = queue_.empty() && !committing_;  // otherwise the thread looks at the queue anyway
    queue_.push_back(std::move(batch));
  }
  if (wake) work_.notify_one();
}

void CommitThread::RunWhenIdle(std::function<void(sqlite3*)> task) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wake = queue_.empty() && idle_tasks_.empty() && !committing_;
    idle_tasks_.push_back(std::move(task));
  }
  if (wake) work_.notify_one();
}

void CommitThread::WaitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && idle_tasks_.empty() && !committing_; });
}

void CommitThread::Loop() {
  std::vector<WriteBatch> batches;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stop_ || !queue_.empty() || !idle_tasks_.empty(); });
    if (!queue_.empty()) {
      batches.swap(queue_);
      committing_ = true;
      lock.unlock();
      CommitOutcome outcome = Commit(batches);
      batches.clear();
      on_done_(std::move(outcome));
      lock.lock();
    } else if (stop_) {
      idle_tasks_.clear();
      idle_.notify_all();
      return;  // nothing left to commit
    } else {
      // Idle: batches first, so a task never delays a write that was already waiting.
      std::function<void(sqlite3*)> task = std::move(idle_tasks_.front());
      idle_tasks_.erase(idle_tasks_.begin());
      committing_ = true;
      lock.unlock();
      task(db_);
      lock.lock();
    }
    committing_ = false;
    if (queue_.empty() && idle_tasks_.empty()) idle_.notify_all();
  }
}

Status CommitThread::Run(Statement& statement) {
  Status status = statement.Run(db_);
  return status.ok() ? status : Unavailable(status.message());
}

CommitOutcome CommitThread::Commit(std::vector<WriteBatch>& batches) {
  // A latency measurement for the figures and logs: real time, not an injected Clock.
  const auto started = std::chrono::steady_clock::now();
  bool a_write_failed = false;
  CommitOutcome outcome = Attempt(batches, false, &a_write_failed);
  if (a_write_failed && batches.size() > 1) {
    // Rare (a write refused on its own, e.g. a constraint): once more, each batch in a savepoint,
    // so that only the failing batch fails. The writes bind their values anew each time.
    outcome = Attempt(batches, true, &a_write_failed);
  }
  outcome.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  metrics::PluginFamilies& metrics = metrics::Families();
  metrics.commit_duration.Observe(outcome.seconds);
  metrics.commit_batch_size.Observe(static_cast<double>(outcome.writes));
  if (!outcome.commit.ok() || !outcome.failed_batches.empty()) metrics.commit_failures.Increment();
  return outcome;
}

CommitOutcome CommitThread::Attempt(std::vector<WriteBatch>& batches, bool savepoints,
                                    bool* a_write_failed) {
  CommitOutcome outcome;
  outcome.first_seq = batches.front().seq;
  outcome.last_seq = batches.back().seq;
  *a_write_failed = false;
  outcome.commit = Run(begin_);
  for (WriteBatch& batch : batches) {
    if (!outcome.commit.ok()) break;
    outcome.writes += batch.writes.size();
    Status batch_status = savepoints ? Run(savepoint_) : Status::Ok();
    for (WriteStep& write : batch.writes) {
      if (!batch_status.ok()) break;
      batch_status = write(db_);
    }
    if (savepoints && batch_status.ok()) batch_status = Run(release_);
    if (batch_status.ok()) continue;
    *a_write_failed = true;
    if (!savepoints || sqlite3_get_autocommit(db_)) {
      // No savepoint to return to, or SQLite rolled the whole transaction back itself (a full
      // disk, an I/O error): every batch fails.
      outcome.commit = batch_status;
      break;
    }
    // Undoing a failed batch: if these fail too, SQLite has rolled the transaction back itself
    // (autocommit again), which the commit below reports for every batch.
    (void)Run(rollback_to_);
    (void)Run(release_);
    outcome.failed_batches.emplace_back(batch.seq, batch_status);
  }
  if (outcome.commit.ok()) outcome.commit = Run(commit_);
  // The failure is already the outcome; a rollback that fails leaves nothing more to report
  // (SQLite rolls back a transaction it cannot continue).
  if (!outcome.commit.ok() && !sqlite3_get_autocommit(db_)) (void)Run(rollback_);
  return outcome;
}

}  // namespace oxide::store
