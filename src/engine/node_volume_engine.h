// The node's volume engine: stage, unstage, publish and unpublish of Oxide disks on this node, and
// the health and usage of a staged or published volume. It owns the node rows (NodeVolumeStore);
// every row change goes through the node state table (node_volume_state.h) and the store's group
// commit, and a row is durable before the side effect it announces and before the answer.
// Calls for a volume with an operation in flight join it when identical (same RPC, same
// arguments: they get its result) and are refused ABORTED otherwise, like the controller's.
// The OS work (device discovery, blkid, mkfs, fsck, mount, statvfs) runs on libuv worker threads
// through NodeOs; its results come back to the loop. A row is a hint: every call re-derives the
// volume's device from its serial and the mount table (NodeOs) before it touches a device or
// answers, and corrects or drops a row the device contradicts (docs/node-safety.md). Knows no
// protobuf: src/csi/node_service converts. Loop thread only.
// The steps: node_volume_stage.cc (stage, unstage), node_volume_engine.cc (the shared frame,
// publish, unpublish, health).
#pragma once

#include <uv.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/node_os_work.h"
#include "engine/node_volume_state.h"
#include "engine/operation_tracker.h"
#include "loop/loop_affinity.h"
#include "node/node_os.h"
#include "store/group_commit.h"
#include "store/node_volume_store.h"

namespace oxide::engine {

// What a stage or publish needs to know of the volume capability.
struct NodeAccess {
  bool block = false;
  std::string fs_type;  // mount only
  node::MountOptions options;
  std::string key;  // canonical text of the capability: repeats compare it
};

struct StageSpec {
  std::string volume_id;
  std::string staging_path;
  std::string serial;  // the NVMe serial the volume's disk shows
  NodeAccess access;
  std::optional<uint64_t> disk_bytes;  // the disk's size as published; a device of another
                                       // size is never formatted
  // An encrypted volume: its disk holds LUKS2, opened with `passphrase` (never logged).
  bool encrypted = false;
  std::string passphrase;
  node::FilesystemOptions fs_options;  // what mkfs applies to a blank device (volume_context)
};

struct PublishSpec {
  std::string volume_id;
  std::string target_path;
  std::string staging_path;
  NodeAccess access;
  bool readonly = false;
  bool single_writer = false;  // SINGLE_NODE_SINGLE_WRITER: one publication at most
};

using VolumeHealth = node::VolumeMeasurement;

class NodeVolumeEngine {
 public:
  using Done = std::function<void(const Status&)>;

  // Everything passed outlives the engine.
  NodeVolumeEngine(uv_loop_t* loop, node::NodeOs* os, DeviceWaiter* waiter,
                   store::NodeVolumeStore* store, store::GroupCommit* commit,
                   int max_concurrent_formats);
  ~NodeVolumeEngine();
  NodeVolumeEngine(const NodeVolumeEngine&) = delete;
  NodeVolumeEngine& operator=(const NodeVolumeEngine&) = delete;

  // `done` runs once, on the loop thread, when the operation (or the one it joined) has ended
  // and its rows are durable.
  void Stage(const StageSpec& spec, Done done);
  void Unstage(const std::string& volume_id, const std::string& staging_path, Done done);
  void Publish(const PublishSpec& spec, Done done);
  void Unpublish(const std::string& volume_id, const std::string& target_path, Done done);
  // NOT_FOUND unless the volume is published or staged at `path` (checked before the path's
  // syntax, as the CSI spec orders it). Calls for one volume and path while a measurement is
  // under way share it.
  void Health(const std::string& volume_id, const std::string& path,
              std::function<void(StatusOr<VolumeHealth>)> done);

  using Tracker = BasicOperationTracker<Status>;
  const Tracker& tracker() const {
    affinity_.Check("NodeVolumeEngine::tracker");
    return tracker_;
  }
  // The same operations, for a shutdown that waits for them.
  OperationsInFlight& operations() {
    affinity_.Check("NodeVolumeEngine::operations");
    return tracker_;
  }

 private:
  // Each runs an admitted operation; `finish` ends it (once) with its outcome.
  void StageAdmitted(const StageSpec& spec, Done finish);
  // A repeat of a stage that is recorded as done: answered OK only when the device found by
  // serial (and, for a mount volume, the staging mount) says so; otherwise staged again.
  void VerifyStagedRow(store::StagingRow row, const StageSpec& spec, Done finish);
  void BeginStaging(const std::optional<store::StagingRow>& existing, const StageSpec& spec,
                    Done finish);
  void StageWithDevice(store::StagingRow row, node::StageInputs inputs,
                       StatusOr<node::BlockDevice> device, Done finish);
  // An encrypted block volume: its disk's mapping is opened (the disk encrypted first when blank).
  void OpenEncryptedBlock(store::StagingRow row, const node::BlockDevice& found,
                          node::StageInputs inputs, Done finish);
  void StageByPlan(store::StagingRow row, const node::BlockDevice& found, node::StageInputs inputs,
                   node::StagePlan plan, Done finish);
  void CarryOutPlan(store::StagingRow row, const node::BlockDevice& found,
                    const node::StageInputs& inputs, const node::StagePlan& plan, Done finish);
  void MarkStaged(store::StagingRow row, const node::BlockDevice& found, const char* how,
                  Done finish);
  void FailStaging(store::StagingRow row, const Status& status, Done finish);
  // FailStaging, after closing an encrypted volume's mapping that the stage may have opened.
  void CloseMappingAndFail(store::StagingRow row, const Status& status, Done finish);
  void UnstageAdmitted(const std::string& volume_id, const std::string& path, Done finish);
  void PublishAdmitted(const PublishSpec& spec, Done finish);
  // Why `spec` cannot be published now (not staged there, staged as the other access type, the
  // target held by another volume or capability, a single writer published elsewhere); OK if it
  // can. `staging`: the volume's staging row; `existing`: the target's publication row.
  Status PublishRefusal(const PublishSpec& spec, const std::optional<store::StagingRow>& staging,
                        const std::optional<store::PublicationRow>& existing) const;
  // The bind mount's outcome: the publication row (moved unless `repeat`) and the answer.
  void Bound(store::PublicationRow row, bool repeat, StatusOr<node::BlockDevice> bound,
             Done finish);
  void UnpublishAdmitted(const std::string& volume_id, const std::string& target, Done finish);

  // Admits an operation on `volume_id` and runs `start` with its finish callback, unless the
  // call joined an identical one or was refused.
  void Run(const std::string& volume_id, const std::string& kind, const std::string& fingerprint,
           Done done, const std::function<void(Done)>& start);
  // The entry of an unstage or an unpublish (both name a volume and a path): the loop thread
  // checked for `where`, `done` timed as `operation`, the call admitted as `kind` with the path as
  // its arguments, then `admitted` run.
  using ReleaseStep = void (NodeVolumeEngine::*)(const std::string& volume_id,
                                                 const std::string& path, Done finish);
  void RunRelease(const char* where, const char* operation, const char* kind,
                  const std::string& volume_id, const std::string& path, Done done,
                  ReleaseStep admitted);
  // Moves a row (a StagingRow or a PublicationRow) along the state table and writes (or deletes)
  // it; INTERNAL when the table forbids the move.
  template <typename Row>
  Status Move(Row& row, NodeVolumeEvent event);
  // `done`, recording oxide_csi_node_operation_duration_seconds{operation, result} first.
  static Done Timed(const char* operation, Done done);
  // The staging row of `volume_id` pointed at `found` when the row remembers another device.
  void CorrectStagedDevice(const std::string& volume_id, const node::BlockDevice& found);
  // Runs `next` once every row written so far is durable; when the commit failed, `finish` gets
  // UNAVAILABLE instead. Side effects wait for their intent.
  void WhenDurable(Done finish, std::function<void()> next);
  // Once every row written so far is durable: `finish` gets `outcome` (an OK outcome whose rows
  // failed to commit becomes UNAVAILABLE).
  void AnswerWhenDurable(Done finish, Status outcome);

  uv_loop_t* loop_;
  node::NodeOs* os_;
  DeviceWaiter* waiter_;
  store::NodeVolumeStore* store_;
  store::GroupCommit* commit_;
  Tracker tracker_{"volume"};
  FormatGate formats_;
  // Volumes whose stage began from a stale row: a failure leaves the row stale (kRestageFailed)
  // with the device it last had, instead of deleting it.
  std::set<std::string> restaging_;
  // Health measurements under way, by volume id, path and expectations: the callers waiting.
  std::map<std::string, std::vector<std::function<void(StatusOr<VolumeHealth>)>>> measuring_;
  LoopAffinity affinity_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace oxide::engine
