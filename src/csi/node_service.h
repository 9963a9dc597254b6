// The CSI Node service: NodeGetInfo, NodeGetCapabilities, and the CSI side of stage/unstage,
// publish/unpublish and volume stats: it checks each request, converts it to the node volume
// engine's terms (engine/node_volume_engine.h), which does the work and owns the node rows, and
// converts the outcome back. It builds the engine with the host's NodeOs. Loop thread only.
#pragma once

#include <memory>
#include <string>

#include "config/settings.h"
#include "engine/node_os_work.h"
#include "engine/node_volume_engine.h"
#include "loop/clock.h"
#include "loop/event_loop.h"
#include "loop/loop_affinity.h"
#include "node/node_os.h"
#include "rpc/csi_rpcs.h"
#include "store/group_commit.h"
#include "store/node_volume_store.h"
#include "store/state_db.h"

namespace oxide::csi_adapter {

class NodeService {
 public:
  // `node_id` is what NodeGetInfo reports (node/instance_identity.h resolves it at start);
  // `max_volumes` too (see MaxVolumesPerNode). `loop` and `db` outlive the service; so does
  // `clock`.
  NodeService(const Settings& settings, const std::string& node_id, EventLoop* loop, Clock* clock,
              store::StateDb* db, int max_volumes, store::GroupCommit* commit);
  ~NodeService() = default;
  NodeService(const NodeService&) = delete;
  NodeService& operator=(const NodeService&) = delete;

  // Settings.volume_attach_limit, or when 0: 12 (Oxide's disk limit per instance, boot disk
  // included) minus the NVMe disks in sysfs that are not the plugin's minus
  // Settings.reserved_volume_attachments; at least 1 (with a warning). Reads sysfs: call at
  // start, before serving.
  static int MaxVolumesPerNode(const Settings& settings);

  // Brings the rows in line with the mounts (see node_reconciler.h). At start, before serving.
  Status Reconcile();

  void Register(rpc::CsiHandlers& handlers);
  // Ends device waits in progress with UNAVAILABLE; call before the loop stops.
  void Shutdown() { waiter_.CancelAll(); }
  // The node engine's operations in flight (they outlive their calls: a shutdown waits for them).
  engine::OperationsInFlight& operations() { return engine_.operations(); }

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
  const Settings& settings_;
  EventLoop* loop_;
  store::StateDb* db_;
  store::GroupCommit* commit_;
  store::NodeVolumeStore store_;
  node::HostOs os_;
  engine::DeviceWaiter waiter_;
  engine::NodeVolumeEngine engine_;
  csi::v1::NodeGetInfoResponse info_;
  LoopAffinity affinity_;  // handlers run on the loop thread
};

}  // namespace oxide::csi_adapter
