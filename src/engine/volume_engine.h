// The controller's volume operations: create, delete, publish (attach) and unpublish (detach) an
// Oxide disk, each journaled (store::Journal) before Oxide is asked and closed after Oxide
// confirms, with the per-volume state machine recorded in the store. Each operation is a chain of
// named steps, one Oxide request or one commit each (create, clone and delete in
// volume_lifecycle.cc; publish and unpublish in volume_attachment.cc; recovery in
// volume_recovery.cc; the job's frame and shared steps in volume_engine.cc). Calls for a volume
// that is busy join or are refused (OperationTracker); operations run to the end even when their
// RPC has given up. At start, RecoverUnfinished() reconciles every open journal entry with Oxide.
// Loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <memory>
#include <string>

#include "backend/oxide_client.h"
#include "engine/journal_entry.h"
#include "engine/operation_tracker.h"
#include "engine/volume_state.h"
#include "loop/delayed_tasks.h"
#include "loop/loop_affinity.h"
#include "store/group_commit.h"
#include "store/volume_store.h"

namespace oxide::engine {

struct CreateSpec {
  std::string co_name, disk_name, description;
  uint64_t size = 0;                  // what a new disk gets
  uint64_t required = 0;              // an existing disk must be at least this big (0: any) ...
  uint64_t limit = 0;                 // ... and at most this big (0: any)
  uint64_t block_size = 0;            // for a new disk
  bool block_size_requested = false;  // an existing disk must then have this block size
  std::string snapshot_id;            // restore: the disk is made from this Oxide snapshot
  std::string clone_source;           // clone: the volume (disk id) whose data the new disk gets
  // backend::kDiskTypeDistributed or kDiskTypeLocal (blank only); an existing disk must match.
  std::string disk_type = backend::kDiskTypeDistributed;
};

struct EngineOptions {
  std::chrono::milliseconds poll_first{100};
  std::chrono::milliseconds poll_max{2000};
  // An operation that Oxide has not finished after this long fails with DEADLINE_EXCEEDED.
  std::chrono::milliseconds operation_limit{std::chrono::minutes(10)};
  std::chrono::milliseconds recovery_retry_max{std::chrono::seconds(30)};
};

class VolumeEngine {
 public:
  VolumeEngine(Clock* clock, backend::OxideClient* oxide, store::VolumeStore* store,
               store::GroupCommit* commit, EngineOptions options = {});
  ~VolumeEngine();
  VolumeEngine(const VolumeEngine&) = delete;
  VolumeEngine& operator=(const VolumeEngine&) = delete;

  // `fingerprint` identifies the call's arguments: an identical retry joins, another is ABORTED.
  // Each waiter gets the disk as Oxide reported it at the end, or the error.
  void Create(const CreateSpec& spec, const std::string& fingerprint, OperationWaiter done);
  void Delete(const std::string& volume_id, OperationWaiter done);
  void Publish(const std::string& volume_id, const std::string& node_id,
               const std::string& fingerprint, OperationWaiter done);
  // An empty node_id detaches the disk from whatever instance holds it.
  void Unpublish(const std::string& volume_id, const std::string& node_id, OperationWaiter done);

  // Starts reconciling every unfinished journal entry; each volume stays busy (ABORTED for the
  // CO) until its entry is closed. Returns how many entries were found.
  size_t RecoverUnfinished();

  const OperationTracker& tracker() const {
    affinity_.Check("VolumeEngine::tracker");
    return tracker_;
  }
  // The same operations, for a shutdown that waits for them.
  OperationsInFlight& operations() {
    affinity_.Check("VolumeEngine::operations");
    return tracker_;
  }

 private:
  // One operation under way: what its named steps hand on to each other.
  struct Job {
    std::string key;  // the tracker's and the journal's key: the disk name (create), else the id
    int64_t op_id = 0;
    std::unique_ptr<store::VolumeRow> before;  // heap: most creates have none
    std::string row_key;  // disk name of the row this job may have written; removed on a revert
    Clock::TimePoint give_up;
    std::string temp_snapshot;  // a clone's temporary snapshot, deleted before the job completes
    CreateSpec spec;            // a create's; the steps read it here rather than keep copies
    // A create's: the id the local row recorded for a disk Oxide no longer has, when the create
    // makes a new one under the same name (logged with the new id once Oxide has it).
    std::string vanished_volume_id;
    std::string node;  // a publish's or unpublish's instance
  };
  using JobPtr = std::shared_ptr<Job>;

  // ---- the job's frame (volume_engine.cc) ----
  JobPtr StartJob(const std::string& key, OperationKind kind, const std::string& args,
                  std::optional<store::VolumeRow> before);
  // A publish's or an unpublish's job: journals `node` as its argument and keeps it.
  JobPtr StartNodeJob(const std::string& volume_id, OperationKind kind, const std::string& node,
                      std::optional<store::VolumeRow> before);
  // Runs `next` once the job's writes are durable; answers the job's error when they are not.
  void AfterCommit(const JobPtr& job, std::function<void()> next);
  // Closes the journal entry, records `row` (or removes the volume when nullopt) and answers
  // everyone waiting once that is durable.
  void Complete(const JobPtr& job, OperationResult result, const char* journal_state,
                const std::optional<store::VolumeRow>& row);
  void Revert(const JobPtr& job, const Status& error);

  // ---- CreateVolume (volume_lifecycle.cc): request -> [clone snapshot] -> Oxide's answer ->
  // the disk settles -> Oxide reports it created ----
  // Asks Oxide for the disk, through a clone snapshot when the spec clones a volume.
  void MakeDisk(const JobPtr& job);
  void SendCreate(const JobPtr& job);
  void CreateAnswered(const JobPtr& job, StatusOr<backend::Disk> created);
  // Looks the disk of job->spec up until it settles and completes the create from what it is.
  void ConfirmCreate(const JobPtr& job, const Status& create_error);
  void CreateSettled(const JobPtr& job, const Status& create_error, StatusOr<backend::Disk> found);
  void OxideReportsCreated(const JobPtr& job, const backend::Disk& disk);

  // ---- clone steps (volume_lifecycle.cc): snapshot the source into a temporary snapshot, make the
  // disk from it; Complete() deletes the temporary snapshot before anyone is answered ----
  void TakeCloneSnapshot(const JobPtr& job);
  void CloneSnapshotAnswered(const JobPtr& job, StatusOr<backend::Snapshot> created);
  // The POST's outcome was unknown or "already exists": the snapshot Oxide has under the name.
  void CloneSnapshotFound(const JobPtr& job, const Status& create_error,
                          StatusOr<backend::Snapshot> found);
  void CreateFromCloneSnapshot(const JobPtr& job, const backend::Snapshot& snapshot,
                               std::chrono::milliseconds delay);
  void DropTemporarySnapshot(const std::string& name, Clock::TimePoint give_up,
                             std::chrono::milliseconds delay, std::function<void()> then);

  // ---- DeleteVolume (volume_lifecycle.cc): request -> Oxide's answer ----
  // A volume this replica has no row for: Oxide is asked what it is before the delete.
  void DeleteUnrecorded(const std::string& volume_id);
  void SendDelete(const JobPtr& job);
  void DeleteAnswered(const JobPtr& job, const Status& deleted);

  // ---- ControllerPublishVolume (volume_attachment.cc): request -> Oxide's answer -> attached ----
  void RequestAttach(const JobPtr& job);
  void AttachAnswered(const JobPtr& job, StatusOr<backend::Disk> attached);
  void AttachSettled(const JobPtr& job, StatusOr<backend::Disk> disk);

  // ---- ControllerUnpublishVolume (volume_attachment.cc): request -> Oxide's answer ->
  // detached ----
  // Detaches the disk from `holder` once the observed disk allows it.
  void UnpublishObserved(const std::string& volume_id, const std::string& node_id,
                         StatusOr<backend::Disk> disk, std::optional<store::VolumeRow> observed);
  void RequestDetach(const JobPtr& job);
  void DetachAnswered(const JobPtr& job, StatusOr<backend::Disk> detached);
  void DetachSettled(const JobPtr& job, const Status& detach_error, StatusOr<backend::Disk> disk);
  // Completes an unpublish from the disk Oxide reports detached from the job's node.
  void Unpublished(const JobPtr& job, const backend::Disk& disk);

  // ---- shared steps (volume_engine.cc) ----
  // One lock per volume: makes `also` (the disk's name or id) a key of the operation running for
  // `key`; false, and the call answered ABORTED, when another operation holds it.
  bool HoldAlso(const std::string& key, const std::string& also);
  // Oxide refused the job's request (FAILED_PRECONDITION) for the disk's state: answers what
  // `rule` says of the state Oxide reports now, or the refusal itself when the rule has no
  // objection. A disk that is gone completes the job when `gone_is_done`.
  void ExplainRefusal(const JobPtr& job, const Status& refusal, bool gone_is_done,
                      std::function<Status(const backend::Disk&)> rule);
  // GETs the disk until `settled` accepts it or the operation's time is up.
  void PollDisk(const std::string& disk, Clock::TimePoint give_up, std::chrono::milliseconds delay,
                std::function<bool(const backend::Disk&)> settled,
                backend::Done<backend::Disk> done);
  // Looks the volume up in Oxide and records what it sees (for volumes this replica never saw,
  // and rows left in a transitional state), once it holds the disk's name as well as the volume
  // id (else the call is answered ABORTED and `then` is not called).
  void Observe(const std::string& volume_id,
               std::function<void(StatusOr<backend::Disk>, std::optional<store::VolumeRow>)> then);

  // ---- recovery (volume_recovery.cc) ----
  void Recover(const JournalEntry& entry, std::chrono::milliseconds retry_delay);
  // What Oxide reports of the entry's disk settles the entry (`before`: the row at the start).
  void RecoverFromReport(const JournalEntry& entry, std::chrono::milliseconds retry_delay,
                         const std::optional<store::VolumeRow>& before,
                         StatusOr<backend::Disk> disk);
  // Reconciles the still-pending journal entry `op_id` with Oxide in a second (once no call
  // holds its volume): an outcome that could not be recorded is settled without a restart.
  void ReconcileLater(int64_t op_id);
  // Drops a clone's temporary snapshot, records `row` and closes the entry (CloseRecoveredEntry).
  void FinishRecovery(const JournalEntry& entry, const char* journal_state,
                      const std::optional<store::VolumeRow>& row);

  Clock* clock_;
  backend::OxideClient* oxide_;
  store::VolumeStore* store_;
  store::Journal& journal_;  // store_'s
  store::GroupCommit* commit_;
  EngineOptions options_;
  OperationTracker tracker_;
  DelayedTasks delayed_;
  LoopAffinity affinity_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Why `disk` does not hold the content `spec` asks for (blank, a snapshot's, a clone's); empty when
// it does.
std::string ContentMismatch(const CreateSpec& spec, const backend::Disk& disk);

}  // namespace oxide::engine
