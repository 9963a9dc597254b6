#include "store/journal_pruner.h"

#include <utility>

#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::store {
namespace {

// Oldest first (ids grow with time): finished entries older than ?1 or not among the newest ?2
// finished ones, at most ?3 of them. The inner scalar query runs once per statement.
constexpr const char* kPruneSql =
    "DELETE FROM operations WHERE id IN ("
    "  SELECT id FROM operations WHERE state != 'pending' AND ("
    "    finished_ms < ?1 OR id <= ifnull((SELECT id FROM operations WHERE state != 'pending'"
    "                                      ORDER BY id DESC LIMIT 1 OFFSET ?2), 0))"
    "  ORDER BY id LIMIT ?3)";

}  // namespace

JournalPruner::JournalPruner(Clock* clock, GroupCommit* commit, JournalRetention retention)
    : clock_(clock),
      commit_(commit),
      retention_(std::move(retention)),
      listener_(commit, [](uint64_t, bool) {}) {}

JournalPruner::~JournalPruner() {
  *alive_ = false;
  if (timer_ != 0) clock_->CancelTimer(timer_);
}

void JournalPruner::Start() {
  affinity_.Check("JournalPruner::Start");
  started_ = true;
  Schedule(std::chrono::milliseconds(0), false);
}

void JournalPruner::NoteFinished() {
  affinity_.Check("JournalPruner::NoteFinished");
  ++finished_since_step_;
  if (started_ && !step_running_ && !step_due_now_ && finished_since_step_ >= retention_.batch) {
    Schedule(std::chrono::milliseconds(0), true);
  }
}

void JournalPruner::Schedule(std::chrono::milliseconds delay, bool burst) {
  if (timer_ != 0) clock_->CancelTimer(timer_);
  step_due_now_ = delay.count() == 0;
  timer_ = clock_->StartTimer(delay, [this, burst] {
    timer_ = 0;
    step_due_now_ = false;
    Step(burst);
  });
}

void JournalPruner::Step(bool burst) {
  step_running_ = true;
  finished_since_step_ = 0;
  auto deleted = std::make_shared<int64_t>(0);
  const int64_t cutoff = clock_->WallMillis() - retention_.max_age.count();
  // A batch of its own: a step that fails fails no caller's write.
  auto write = [this, deleted, cutoff](sqlite3* db) {
    if (!prune_.valid()) prune_ = Statement(db, kPruneSql);
    Status pruned =
        prune_.Bind(1, cutoff).Bind(2, retention_.max_finished).Bind(3, retention_.batch).Run(db);
    *deleted = pruned.ok() ? sqlite3_changes(db) : 0;
    return pruned;
  };
  commit_->WriteAlone(std::move(write), [this, alive = alive_, deleted, burst](Status committed) {
    if (!*alive) return;
    step_running_ = false;
    const bool full = committed.ok() && *deleted >= retention_.batch;
    if (committed.ok()) {
      ++steps_;
      pruned_ += static_cast<uint64_t>(*deleted);
      metrics::Families().journal_entries_pruned.Increment(static_cast<uint64_t>(*deleted));
      if (*deleted > 0) {
        log::Debug("pruned finished journal entries", {{"count", std::to_string(*deleted)}});
      }
      // Compaction when calls pause (a period step, the first one), and at most once a period
      // while they keep coming: during a burst the pages a step frees are taken again by the
      // next entries, and SQLite's own checkpoint bounds the WAL, so compacting after every
      // step would only make commits wait (it cost a third of the lifecycle rate).
      const Clock::TimePoint now = clock_->Now();
      if (!burst || !compacted_once_ || now - last_compaction_ >= retention_.period) {
        compacted_once_ = true;
        last_compaction_ = now;
        ++compactions_;
        commit_->RunWhenIdle([limits = retention_.compaction](sqlite3* db) {
          CompactionResult compacted = CompactFile(db, limits);
          metrics::Families().state_db_bytes.Set(static_cast<double>(compacted.file_bytes));
        });
      }
    }
    // A full batch: more to delete, go on at once. Otherwise wait for the period, or for enough
    // newly finished entries to fill a batch.
    if (full || finished_since_step_ >= retention_.batch) {
      Schedule(std::chrono::milliseconds(0), true);
    } else {
      Schedule(retention_.period, false);
    }
  });
}

}  // namespace oxide::store
