#include "csi/node_service.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "csi/handler_install.h"
#include "csi/node_requests.h"
#include "csi/request_checks.h"
#include "engine/node_reconciler.h"
#include "node/device_finder.h"
#include "util/log.h"

namespace oxide::csi_adapter {
namespace {

using csi::v1::NodeServiceCapability;

constexpr int kOxideDisksPerInstance = 12;

engine::NodeAccess AccessOf(const CapabilitySpec& capability) {
  return {.block = capability.block,
          .fs_type = capability.fs_type,
          .options = capability.options,
          .key = capability.key};
}

// The engine's outcome as the RPC's answer (these responses carry no fields).
template <typename Response>
engine::NodeVolumeEngine::Done AnswerWith(rpc::Reply<Response> reply) {
  return [reply = rpc::Share(std::move(reply))](const Status& outcome) {
    if (outcome.ok()) return reply->Ok({});
    reply->Fail(outcome);
  };
}

}  // namespace

NodeService::NodeService(const Settings& settings, const std::string& node_id, EventLoop* loop,
                         Clock* clock, store::StateDb* db, int max_volumes,
                         store::GroupCommit* commit)
    : settings_(settings),
      loop_(loop),
      db_(db),
      commit_(commit),
      store_(db, commit),
      os_(settings.sysfs_root,
          node::CommandLimits{.format = std::chrono::seconds(settings.mkfs_timeout_seconds),
                              .check = std::chrono::seconds(settings.fsck_timeout_seconds),
                              .command = std::chrono::seconds(settings.command_timeout_seconds)},
          settings.xfs_feature_profile),
      waiter_(loop->uv(), clock, &os_, std::chrono::seconds(settings.device_wait_seconds)),
      engine_(loop->uv(), &os_, &waiter_, &store_, commit, settings.max_concurrent_formats) {
  const std::string& profile = settings.xfs_feature_profile;
  if (!profile.empty() && profile[0] == '/' && access(profile.c_str(), R_OK) != 0) {
    log::Warn(
        "the XFS feature profile's config file cannot be read: XFS volumes are formatted "
        "with the default profile until it can",
        {{"xfs_feature_profile", profile}, {"fallback", node::kDefaultXfsFeatureProfile}});
  }
  info_.set_node_id(node_id);
  info_.set_max_volumes_per_node(max_volumes);
  (*info_.mutable_accessible_topology()->mutable_segments())[kTopologyKey] = settings.topology_zone;
}

int NodeService::MaxVolumesPerNode(const Settings& settings) {
  if (settings.volume_attach_limit > 0) return settings.volume_attach_limit;
  const int unmanaged = node::CountUnmanagedNvmeDevices(settings.sysfs_root);
  const int computed = kOxideDisksPerInstance - unmanaged - settings.reserved_volume_attachments;
  if (computed < 1) {
    log::Warn(
        "no attachment left for CSI volumes on this node; reporting 1",
        {{"oxide_disks_per_instance", std::to_string(kOxideDisksPerInstance)},
         {"disks_not_managed_by_the_plugin", std::to_string(unmanaged)},
         {"reserved_volume_attachments", std::to_string(settings.reserved_volume_attachments)}});
    return 1;
  }
  return computed;
}

Status NodeService::Reconcile() {
  if (!store_.load_status().ok()) return store_.load_status();
  auto counts = engine::ReconcileNodeVolumes(store_, os_);
  if (!counts.ok()) return counts.status();
  commit_->Flush();  // start-up: nothing is served yet, so blocking here delays no call
  if (Status health = db_->Health(); !health.ok()) return health;
  log::Info("node volumes reconciled with the mounts",
            {{"kept", std::to_string(counts->kept)},
             {"completed", std::to_string(counts->completed)},
             {"rolled_back", std::to_string(counts->rolled_back)},
             {"stale", std::to_string(counts->marked_stale)},
             {"corrected", std::to_string(counts->corrected)}});
  return Status::Ok();
}

void NodeService::NodeGetInfo(const rpc::CallInfo&, const csi::v1::NodeGetInfoRequest&,
                              rpc::Reply<csi::v1::NodeGetInfoResponse> reply) {
  reply.Ok(info_);
}

void NodeService::NodeGetCapabilities(const rpc::CallInfo&,
                                      const csi::v1::NodeGetCapabilitiesRequest&,
                                      rpc::Reply<csi::v1::NodeGetCapabilitiesResponse> reply) {
  csi::v1::NodeGetCapabilitiesResponse response;
  for (auto type :
       {NodeServiceCapability::RPC::STAGE_UNSTAGE_VOLUME,
        NodeServiceCapability::RPC::GET_VOLUME_STATS, NodeServiceCapability::RPC::VOLUME_CONDITION,
        NodeServiceCapability::RPC::SINGLE_NODE_MULTI_WRITER}) {
    response.add_capabilities()->mutable_rpc()->set_type(type);
  }
  reply.Ok(std::move(response));
}

void NodeService::NodeStageVolume(const rpc::CallInfo&,
                                  const csi::v1::NodeStageVolumeRequest& request,
                                  rpc::Reply<csi::v1::NodeStageVolumeResponse> reply) {
  StatusOr<NodeStageChecks> checked = CheckNodeStageVolume(request);
  if (!checked.ok()) return reply.Fail(checked.status());
  engine_.Stage({.volume_id = request.volume_id(),
                 .staging_path = request.staging_target_path(),
                 .serial = checked->serial,
                 .access = AccessOf(checked->capability),
                 .disk_bytes = checked->disk_bytes,
                 .encrypted = checked->encryption.encrypted,
                 .passphrase = std::move(checked->encryption.passphrase),
                 .fs_options = checked->fs_options},
                AnswerWith(std::move(reply)));
}

void NodeService::NodeUnstageVolume(const rpc::CallInfo&,
                                    const csi::v1::NodeUnstageVolumeRequest& request,
                                    rpc::Reply<csi::v1::NodeUnstageVolumeResponse> reply) {
  if (Status checked = CheckNodeUnstageVolume(request); !checked.ok()) return reply.Fail(checked);
  engine_.Unstage(request.volume_id(), request.staging_target_path(), AnswerWith(std::move(reply)));
}

void NodeService::NodePublishVolume(const rpc::CallInfo&,
                                    const csi::v1::NodePublishVolumeRequest& request,
                                    rpc::Reply<csi::v1::NodePublishVolumeResponse> reply) {
  StatusOr<CapabilitySpec> capability = CheckNodePublishVolume(request);
  if (!capability.ok()) return reply.Fail(capability.status());
  using Mode = csi::v1::VolumeCapability::AccessMode;
  engine_.Publish(
      {.volume_id = request.volume_id(),
       .target_path = request.target_path(),
       .staging_path = request.staging_target_path(),
       .access = AccessOf(*capability),
       .readonly = request.readonly() || capability->mode == Mode::SINGLE_NODE_READER_ONLY,
       .single_writer = capability->mode == Mode::SINGLE_NODE_SINGLE_WRITER},
      AnswerWith(std::move(reply)));
}

void NodeService::NodeUnpublishVolume(const rpc::CallInfo&,
                                      const csi::v1::NodeUnpublishVolumeRequest& request,
                                      rpc::Reply<csi::v1::NodeUnpublishVolumeResponse> reply) {
  if (Status checked = CheckNodeUnpublishVolume(request); !checked.ok()) return reply.Fail(checked);
  engine_.Unpublish(request.volume_id(), request.target_path(), AnswerWith(std::move(reply)));
}

void NodeService::NodeGetVolumeStats(const rpc::CallInfo&,
                                     const csi::v1::NodeGetVolumeStatsRequest& request,
                                     rpc::Reply<csi::v1::NodeGetVolumeStatsResponse> reply) {
  if (Status checked = CheckNodeGetVolumeStats(request); !checked.ok()) return reply.Fail(checked);
  engine_.Health(request.volume_id(), request.volume_path(),
                 [reply = rpc::Share(std::move(reply))](StatusOr<engine::VolumeHealth> health) {
                   if (!health.ok()) return reply->Fail(health.status());
                   csi::v1::NodeGetVolumeStatsResponse response;
                   if (health->usage) {
                     const node::FilesystemUsage& u = *health->usage;
                     for (auto [unit, total, used, available] :
                          {std::tuple{csi::v1::VolumeUsage::BYTES, u.bytes_total, u.bytes_used,
                                      u.bytes_available},
                           std::tuple{csi::v1::VolumeUsage::INODES, u.inodes_total, u.inodes_used,
                                      u.inodes_available}}) {
                       csi::v1::VolumeUsage* usage = response.add_usage();
                       usage->set_unit(unit);
                       usage->set_total(total);
                       usage->set_used(used);
                       usage->set_available(available);
                     }
                   } else if (health->block_bytes) {
                     csi::v1::VolumeUsage* usage = response.add_usage();
                     usage->set_unit(csi::v1::VolumeUsage::BYTES);
                     usage->set_total(*health->block_bytes);
                   }
                   response.mutable_volume_condition()->set_abnormal(!health->problem.empty());
                   response.mutable_volume_condition()->set_message(
                       health->problem.empty() ? "healthy" : health->problem);
                   reply->Ok(std::move(response));
                 });
}

void NodeService::Register(rpc::CsiHandlers& handlers) {
  OXIDE_CSI_INSTALL_HANDLER(handlers, NodeService, NodeGetInfo);
  OXIDE_CSI_INSTALL_HANDLER(handlers, NodeService, NodeGetCapabilities);
  OXIDE_CSI_INSTALL_HANDLER(handlers, NodeService, NodeStageVolume);
  OXIDE_CSI_INSTALL_HANDLER(handlers, NodeService, NodeUnstageVolume);
  OXIDE_CSI_INSTALL_HANDLER(handlers, NodeService, NodePublishVolume);
  OXIDE_CSI_INSTALL_HANDLER(handlers, NodeService, NodeUnpublishVolume);
  OXIDE_CSI_INSTALL_HANDLER(handlers, NodeService, NodeGetVolumeStats);
}

}  // namespace oxide::csi_adapter
