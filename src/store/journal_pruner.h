// Keeps the operation journal bounded while the plugin runs: finished entries (done, failed,
// rolled_back) are deleted when older than `max_age` OR beyond the newest `max_finished` finished
// entries (oldest first); unfinished (pending) entries are never touched. Each step deletes at
// most `batch` rows with one DELETE in a GroupCommit batch of its own (the store thread runs it;
// the loop never waits; a step that fails fails no caller's write). A step that found a full batch
// is followed by another at once; one that found less waits for the next period, or until `batch`
// entries have finished since, so the journal stays within about max_finished + batch rows however
// fast calls arrive. After a step in a quiet moment (and at most once a period during a burst), the
// store thread gives free pages back and truncates the WAL in idle time (store/file_compaction.h).
// Loop thread only; timers on the injected Clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "loop/clock.h"
#include "loop/loop_affinity.h"
#include "store/file_compaction.h"
#include "store/group_commit.h"
#include "store/sqlite_handle.h"

namespace oxide::store {

struct JournalRetention {
  std::chrono::milliseconds max_age = std::chrono::hours(24);
  int64_t max_finished = 10000;
  int64_t batch = 500;
  std::chrono::milliseconds period = std::chrono::minutes(1);
  CompactionLimits compaction;
};

class JournalPruner {
 public:
  JournalPruner(Clock* clock, GroupCommit* commit, JournalRetention retention = {});
  // Cancels its timer and commits what is pending (its statement is the store thread's until
  // then). Destroy it before `commit` and `clock`.
  ~JournalPruner();
  JournalPruner(const JournalPruner&) = delete;
  JournalPruner& operator=(const JournalPruner&) = delete;

  // The first step runs at once (the journal a previous run left), then per the rules above.
  void Start();
  // An entry finished (the Journal's finish listener): enough of them bring the next step forward.
  void NoteFinished();

  uint64_t pruned() const { return pruned_; }            // entries deleted by committed steps
  uint64_t steps() const { return steps_; }              // steps committed
  uint64_t compactions() const { return compactions_; }  // idle compactions queued
  const JournalRetention& retention() const { return retention_; }

 private:
  // `burst`: the step follows a full batch or a burst of finished entries, not a quiet period.
  void Step(bool burst);
  void Schedule(std::chrono::milliseconds delay, bool burst);

  Clock* clock_;
  GroupCommit* commit_;
  JournalRetention retention_;
  Clock::TimerId timer_ = 0;
  bool started_ = false;
  bool step_running_ = false;  // written, outcome not yet known
  bool step_due_now_ = false;  // a timer with no delay is pending
  int64_t finished_since_step_ = 0;
  uint64_t pruned_ = 0;
  uint64_t steps_ = 0;
  uint64_t compactions_ = 0;
  bool compacted_once_ = false;
  Clock::TimePoint last_compaction_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  Statement prune_;  // prepared and used by the store thread (first step)
  LoopAffinity affinity_;
  BatchListener listener_;  // last: commits what is pending before the statement goes
};

}  // namespace oxide::store
