// The CSI Node service: NodeGetInfo, NodeGetCapabilities, stage/unstage, publish/unpublish and
// volume stats for Oxide disks seen as NVMe devices. Loop thread only: it owns the node rows of
// the state database and the set of volumes with an operation in flight; every blocking step
// (device discovery, blkid, mkfs, fsck, mount, statvfs) runs on libuv worker threads through
// RunBlocking and its result comes back to the loop. Rows are written in a transitional state
// and made durable (store thread, GroupCommit) before the side effect, and written in their
// result state after it; an answer waits until its rows are durable.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "config/settings.h"
#include "engine/device_waiter.h"
#include "loop/event_loop.h"
#include "node/mounter.h"
#include "rpc/csi_rpcs.h"
#include "store/group_commit.h"
#include "store/node_volume_store.h"
#include "store/state_db.h"

namespace oxide::csi_adapter {

class NodeService {
 public:
  // `max_volumes` is what NodeGetInfo reports (see MaxVolumesPerNode). `loop` and `db` outlive
  // the service.
  NodeService(const Settings& settings, EventLoop* loop, store::StateDb* db, int max_volumes,
              store::GroupCommit* commit);
  ~NodeService();
  NodeService(const NodeService&) = delete;
  NodeService& operator=(const NodeService&) = delete;

  // Settings.max_volumes_per_node, or when 0: 12 (Oxide's disk limit per instance, boot disk
  // included) minus the NVMe disks in sysfs that are not the plugin's; at least 1. Reads sysfs:
  // call at start, before serving.
  static int MaxVolumesPerNode(const Settings& settings);

  // Brings the rows in line with the mounts (see node_reconciler.h). At start, before serving.
  Status Reconcile();

  void Register(rpc::CsiHandlers& handlers);
  // Ends device waits in progress with UNAVAILABLE; call before the loop stops.
  void Shutdown() { waiter_.CancelAll(); }

  void NodeGetInfo(const rpc::CallInfo&, const csi::v1::NodeGetInfoRequest&,
                   rpc::Reply<csi::v1::NodeGetInfoResponse> reply);
  void NodeGetCapabilities(const rpc::CallInfo&, const csi::v1::NodeGetCapabilitiesRequest&,
                           rpc::Reply<csi::v1::NodeGetCapabilitiesResponse> reply);
  void NodeStageVolume(const rpc::CallInfo&, const csi::v1::NodeStageVolumeRequest& request,
                       rpc::Reply<csi::v1::NodeStageVolumeResponse> reply);
  void NodeUnstageVolume(const rpc::CallInfo&, const csi::v1::NodeUnstageVolumeRequest& request,
                         rpc::Reply<csi::v1::NodeUnstageVolumeResponse> reply);
  void NodePublishVolume(const rpc::CallInfo&, const csi::v1::NodePublishVolumeRequest& request,
                         rpc::Reply<csi::v1::NodePublishVolumeResponse> reply);
  void NodeUnpublishVolume(const rpc::CallInfo&, const csi::v1::NodeUnpublishVolumeRequest& request,
                           rpc::Reply<csi::v1::NodeUnpublishVolumeResponse> reply);
  void NodeGetVolumeStats(const rpc::CallInfo&, const csi::v1::NodeGetVolumeStatsRequest& request,
                          rpc::Reply<csi::v1::NodeGetVolumeStatsResponse> reply);

 private:
  // True when `volume_id` has no operation in flight; otherwise answers ABORTED.
  template <typename Response>
  bool Idle(const std::string& volume_id, const char* rpc, rpc::Reply<Response>& reply);
  // Marks `volume_id` busy; false (and the reply is answered ABORTED) when it already is.
  template <typename Response>
  bool Begin(const std::string& volume_id, const char* rpc, rpc::Reply<Response>& reply);
  void End(const std::string& volume_id) { busy_.erase(volume_id); }

  using StageReply = std::shared_ptr<rpc::Reply<csi::v1::NodeStageVolumeResponse>>;
  void StageWithDevice(store::StagingRow row, node::MountOptions options,
                       StatusOr<node::BlockDevice> device, StageReply reply);
  // Formats (when `format`), checks and mounts on a worker; then the row is staged.
  void MountStaged(store::StagingRow row, const node::BlockDevice& found,
                   const node::MountOptions& options, bool format, StageReply reply);
  // Answers a failed stage: the row goes (the retry starts over), unless it holds a format
  // intent, which stays for the retry.
  void FailStaging(const store::StagingRow& row, const Status& status, StageReply reply);

  // Runs `next` once every row written so far is durable; when the commit failed, ends the
  // volume's operation and answers UNAVAILABLE instead. Side effects wait for their intent.
  template <typename Response>
  void ContinueWhenDurable(const std::string& volume_id,
                           std::shared_ptr<rpc::Reply<Response>> reply, std::function<void()> next);
  // Once every row written so far is durable: ends the volume's operation and answers `outcome`
  // (an OK outcome whose rows failed to commit is answered UNAVAILABLE).
  template <typename Response>
  void AnswerWhenDurable(const std::string& volume_id, std::shared_ptr<rpc::Reply<Response>> reply,
                         Status outcome);

  const Settings& settings_;
  EventLoop* loop_;
  store::StateDb* db_;
  store::GroupCommit* commit_;
  store::NodeVolumeStore store_;
  engine::DeviceWaiter waiter_;
  csi::v1::NodeGetInfoResponse info_;
  std::set<std::string> busy_;  // volume ids with an operation in flight
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace oxide::csi_adapter
