#include "engine/volume_engine.h"

#include <algorithm>
#include <utility>

#include "engine/journal_entry.h"
#include "engine/volume_state.h"

namespace oxide::engine {

using backend::Disk;

VolumeEngine::VolumeEngine(Clock* clock, backend::OxideClient* oxide, store::VolumeStore* store,
                           store::GroupCommit* commit, EngineOptions options)
    : clock_(clock),
      oxide_(oxide),
      store_(store),
      journal_(store->journal()),
      commit_(commit),
      options_(options),
      delayed_(clock) {}

VolumeEngine::~VolumeEngine() {
  *alive_ = false;
}

// ---- the job's frame ------------------------------------------------------------------------

VolumeEngine::JobPtr VolumeEngine::StartJob(const std::string& key, OperationKind kind,
                                            const std::string& args,
                                            std::optional<store::VolumeRow> before) {
  auto job = std::make_shared<Job>();
  job->key = key;
  if (before) job->before = std::make_unique<store::VolumeRow>(std::move(*before));
  job->give_up = clock_->Now() + options_.operation_limit;
  job->op_id = journal_.BeginOperation(OperationKindName(kind), key, args);
  return job;
}

VolumeEngine::JobPtr VolumeEngine::StartNodeJob(const std::string& volume_id, OperationKind kind,
                                                const std::string& node,
                                                std::optional<store::VolumeRow> before) {
  JobPtr job = StartJob(volume_id, kind, NodeArgs(node), std::move(before));
  job->node = node;
  return job;
}

void VolumeEngine::AfterCommit(const JobPtr& job, std::function<void()> next) {
  commit_->WhenDurable([this, alive = alive_, job, next = std::move(next)](Status committed) {
    if (!*alive) return;
    if (!committed.ok()) {
      tracker_.Finish(job->key, committed);
      return;
    }
    next();
  });
}

void VolumeEngine::Complete(const JobPtr& job, OperationResult result, const char* journal_state,
                            const std::optional<store::VolumeRow>& row) {
  if (!job->temp_snapshot.empty()) {
    std::string temp = std::exchange(job->temp_snapshot, "");
    return DropTemporarySnapshot(
        temp, job->give_up, options_.poll_first,
        [this, job, result, journal_state, row] { Complete(job, result, journal_state, row); });
  }
  std::string remove = job->before ? job->before->disk_name : job->row_key;
  if (row) {
    store_->Put(*row);
  } else if (!remove.empty()) {
    store_->Remove(remove);
  }
  journal_.FinishOperation(job->op_id, journal_state, JournalOutcome(result.status()));
  commit_->WhenDurable([this, alive = alive_, job, result = std::move(result)](Status committed) {
    if (!*alive) return;
    if (committed.ok()) return tracker_.Finish(job->key, result);
    // Oxide has acted (or refused) but its outcome is not recorded: the journal entry is still
    // pending. It is reconciled with Oxide as soon as the database takes writes again.
    tracker_.Finish(job->key, OperationResult(OutcomeNotRecorded("volume " + job->key, committed)));
    ReconcileLater(job->op_id);
  });
}

void VolumeEngine::Revert(const JobPtr& job, const Status& error) {
  // Back to the stable state the operation started from; a row that was itself transitional (a
  // create that never finished) is dropped: the next call starts over from what Oxide has.
  std::optional<store::VolumeRow> restore;
  if (job->before) restore = *job->before;
  if (restore && !IsStable(VolumeStateFromName(restore->state).value_or(VolumeState::kCreating))) {
    job->row_key = restore->disk_name;
    job->before.reset();
    restore.reset();
  }
  Complete(job, error, kJournalFailed, restore);
}

// ---- shared steps ---------------------------------------------------------------------------

bool VolumeEngine::HoldAlso(const std::string& key, const std::string& also) {
  if (also.empty() || also == key) return true;
  Status held = tracker_.Claim(key, also);
  if (held.ok()) return true;
  tracker_.Finish(key, OperationResult(held));
  return false;
}

void VolumeEngine::ExplainRefusal(const JobPtr& job, const Status& refusal, bool gone_is_done,
                                  std::function<Status(const Disk&)> rule) {
  oxide_->GetDisk(job->key, [this, alive = alive_, job, refusal, gone_is_done,
                             rule = std::move(rule)](StatusOr<Disk> disk) {
    if (!*alive) return;
    const bool gone = !disk.ok() && disk.status().code() == StatusCode::kNotFound;
    if (gone && gone_is_done) return Complete(job, Disk{}, kJournalDone, std::nullopt);
    if (!disk.ok()) return Revert(job, gone ? disk.status() : refusal);
    Status why = rule(*disk);
    if (why.ok()) return Revert(job, refusal);
    Revert(job, Status(why.code(), why.message() + " (Oxide: " + refusal.message() + ")"));
  });
}

void VolumeEngine::PollDisk(const std::string& disk, Clock::TimePoint give_up,
                            std::chrono::milliseconds delay,
                            std::function<bool(const Disk&)> settled, backend::Done<Disk> done) {
  oxide_->GetDisk(disk, [this, alive = alive_, disk, give_up, delay, settled = std::move(settled),
                         done = std::move(done)](StatusOr<Disk> found) mutable {
    if (!*alive) return;
    if (!found.ok() || settled(*found)) return done(std::move(found));
    if (clock_->Now() >= give_up) {
      return done(
          Status(StatusCode::kDeadlineExceeded,
                 "Oxide still reports disk " + found->name + " " + StatusText(*found) + " after " +
                     std::to_string(
                         std::chrono::duration_cast<std::chrono::seconds>(options_.operation_limit)
                             .count()) +
                     " s"));
    }
    auto next_delay = std::min(delay * 2, options_.poll_max);
    delayed_.RunAfter(delay, [this, disk, give_up, next_delay, settled = std::move(settled),
                              done = std::move(done)]() mutable {
      PollDisk(disk, give_up, next_delay, std::move(settled), std::move(done));
    });
  });
}

void VolumeEngine::Observe(
    const std::string& volume_id,
    std::function<void(StatusOr<Disk>, std::optional<store::VolumeRow>)> then) {
  oxide_->GetDisk(
      volume_id, [this, alive = alive_, volume_id, then = std::move(then)](StatusOr<Disk> disk) {
        if (!*alive) return;
        // The disk's name is the volume's other lock key: held before its row is touched.
        if (disk.ok() && !HoldAlso(volume_id, disk->name)) return;
        std::optional<store::VolumeRow> known = store_->FindByVolumeId(volume_id);
        if (!disk.ok()) {
          if (disk.status().code() == StatusCode::kNotFound) {
            if (known) store_->Remove(known->disk_name);
            return then(
                NotFound("volume " + volume_id + " does not exist: Oxide has no disk with this id"),
                std::nullopt);
          }
          return then(disk.status(), std::nullopt);
        }
        StatusOr<store::VolumeRow> row =
            RowAfterReport(*disk, known ? known->co_name : "", StateOf(known));
        if (!row.ok()) return then(row.status(), std::nullopt);
        store_->Put(*row);
        then(std::move(disk), *row);
      });
}

}  // namespace oxide::engine
