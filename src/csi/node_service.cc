#include "csi/node_service.h"

#include <algorithm>
#include <cstdio>

#include "csi/node_requests.h"
#include "csi/request_checks.h"
#include "engine/blocking_work.h"
#include "engine/node_reconciler.h"
#include "node/device_finder.h"
#include "node/path_rules.h"
#include "node/volume_ops.h"
#include "node/volume_stats.h"
#include "util/log.h"

namespace oxide::csi_adapter {
namespace {

using csi::v1::NodeServiceCapability;
using store::PublicationRow;
using store::StagingRow;

constexpr int kOxideDisksPerInstance = 12;

// Answers `reply` with the first failed check; true when all passed.
template <typename Response>
bool Check(rpc::Reply<Response>& reply, std::initializer_list<Status> checks) {
  for (const Status& check : checks) {
    if (!check.ok()) {
      reply.Fail(check);
      return false;
    }
  }
  return true;
}

bool Transitional(const std::string& state) {
  return state != store::kStaged && state != store::kPublished;
}

}  // namespace

NodeService::NodeService(const Settings& settings, EventLoop* loop, store::StateDb* db,
                         int max_volumes, store::GroupCommit* commit)
    : settings_(settings),
      loop_(loop),
      db_(db),
      commit_(commit),
      store_(db, commit),
      waiter_(loop->uv(), settings.sysfs_root, std::chrono::seconds(settings.device_wait_seconds)) {
  info_.set_node_id(settings.instance_id);
  info_.set_max_volumes_per_node(max_volumes);
  (*info_.mutable_accessible_topology()->mutable_segments())[kTopologyKey] = settings.topology_zone;
}

int NodeService::MaxVolumesPerNode(const Settings& settings) {
  if (settings.max_volumes_per_node > 0) return settings.max_volumes_per_node;
  int unmanaged = node::CountUnmanagedNvmeDevices(settings.sysfs_root);
  return std::max(1, kOxideDisksPerInstance - unmanaged);
}

NodeService::~NodeService() {
  *alive_ = false;
}

Status NodeService::Reconcile() {
  if (!store_.load_status().ok()) return store_.load_status();
  auto counts = engine::ReconcileNodeVolumes(store_, settings_.sysfs_root);
  if (!counts.ok()) return counts.status();
  commit_->Flush();  // start-up: nothing is served yet, so blocking here delays no call
  if (Status health = db_->Health(); !health.ok()) return health;
  log::Info("node volumes reconciled with the mounts",
            {{"kept", std::to_string(counts->kept)},
             {"completed", std::to_string(counts->completed)},
             {"rolled_back", std::to_string(counts->rolled_back)},
             {"stale", std::to_string(counts->marked_stale)}});
  return Status::Ok();
}

template <typename Response>
bool NodeService::Idle(const std::string& volume_id, const char* rpc, rpc::Reply<Response>& reply) {
  if (busy_.count(volume_id) == 0) return true;
  reply.Fail(Aborted(std::string(rpc) + ": another operation on volume " + volume_id +
                     " is in progress; retry later"));
  return false;
}

template <typename Response>
bool NodeService::Begin(const std::string& volume_id, const char* rpc,
                        rpc::Reply<Response>& reply) {
  if (!Idle(volume_id, rpc, reply)) return false;
  busy_.insert(volume_id);
  return true;
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
  const CapabilitySpec& capability = checked->capability;
  const std::string& serial = checked->serial;
  const std::string& volume_id = request.volume_id();
  if (!Idle(volume_id, "NodeStageVolume", reply)) return;
  if (std::optional<StagingRow> existing = store_.GetStaging(volume_id);
      existing && !Transitional(existing->state)) {
    if (existing->staging_path != request.staging_target_path()) {
      reply.Fail(AlreadyExists("volume " + volume_id + " is already staged at " +
                               existing->staging_path + ", not at " +
                               request.staging_target_path()));
      return;
    }
    if (existing->capability != capability.key) {
      reply.Fail(AlreadyExists("volume " + volume_id + " is already staged at " +
                               existing->staging_path + " with another volume capability (" +
                               existing->capability + ")"));
      return;
    }
    // A stale row (the mount vanished) is staged again below.
    if (existing->state == store::kStaged) {
      reply.Ok({});
      return;
    }
  }
  if (!Begin(volume_id, "NodeStageVolume", reply)) return;
  // A format of ours that a crash interrupted, on this volume's device: it is done again.
  std::optional<StagingRow> before = store_.GetStaging(volume_id);
  const bool format_intent = before && before->state == store::kFormatting &&
                             before->serial == serial && before->fs_type == capability.fs_type &&
                             !capability.block;

  StagingRow row{.volume_id = volume_id,
                 .staging_path = request.staging_target_path(),
                 .state = format_intent ? store::kFormatting : store::kStaging,
                 .capability = capability.key,
                 .block = capability.block,
                 .fs_type = capability.fs_type,
                 .serial = serial,
                 .device_name = "",
                 .device_number = ""};
  // Durable with the device found below, before anything is formatted or mounted.
  store_.PutStaging(row);
  log::Info("staging volume", {{"volume_id", volume_id},
                               {"serial", row.serial},
                               {"path", row.staging_path},
                               {"access", row.block ? "block" : "mount " + row.fs_type}});
  waiter_.Wait(serial, [this, alive = alive_, row, options = capability.options,
                        shared_reply = rpc::Share(std::move(reply))](
                           StatusOr<node::BlockDevice> device) mutable {
    if (*alive)
      StageWithDevice(std::move(row), std::move(options), std::move(device), shared_reply);
  });
}

void NodeService::StageWithDevice(StagingRow row, node::MountOptions options,
                                  StatusOr<node::BlockDevice> device, StageReply reply) {
  auto fail = [this, &row, &reply](const Status& status) { FailStaging(row, status, reply); };
  if (!device.ok()) return fail(device.status());
  // Never stage one device for two volumes.
  for (const StagingRow& other : store_.ListStagings()) {
    if (other.volume_id != row.volume_id && other.state != store::kStale &&
        other.state != store::kFormatting && other.device_number == device->Number()) {
      return fail(FailedPrecondition("device " + device->node + " (serial " + row.serial +
                                     ") is already staged for volume " + other.volume_id));
    }
  }
  row.device_name = device->name;
  row.device_number = device->Number();
  if (row.block) {  // nothing to mount: the device is remembered in the row
    row.state = store::kStaged;
    store_.PutStaging(row);
    log::Info("volume staged", {{"volume_id", row.volume_id}, {"device", device->node}});
    return AnswerWhenDurable(row.volume_id, reply, Status::Ok());
  }
  store_.PutStaging(row);
  node::BlockDevice found = *device;
  ContinueWhenDurable(row.volume_id, reply, [this, row, found, options, reply] {
    const bool intent = row.state == store::kFormatting;
    engine::RunBlocking(
        loop_->uv(),
        [found, path = row.staging_path, fs_type = row.fs_type, intent] {
          return node::PlanStaging(found, path, fs_type, intent);
        },
        [this, alive = alive_, row, found, options, reply](StatusOr<node::StagePlan> plan) mutable {
          if (!*alive) return;
          if (!plan.ok()) return FailStaging(row, plan.status(), reply);
          if (*plan != node::StagePlan::kFormat) {
            return MountStaged(std::move(row), found, options, false, reply);
          }
          if (row.state == store::kFormatting) {
            log::Warn("formatting the volume again: an earlier format of it was interrupted",
                      {{"volume_id", row.volume_id}, {"device", found.node}});
            return MountStaged(std::move(row), found, options, true, reply);
          }
          // Durable before mkfs touches the device: after a crash the retry knows the device
          // was blank and only our mkfs wrote to it.
          row.state = store::kFormatting;
          store_.PutStaging(row);
          ContinueWhenDurable(row.volume_id, reply, [this, row, found, options, reply] {
            log::Info(
                "formatting volume",
                {{"volume_id", row.volume_id}, {"device", found.node}, {"fs_type", row.fs_type}});
            MountStaged(row, found, options, true, reply);
          });
        });
  });
}

void NodeService::MountStaged(StagingRow row, const node::BlockDevice& found,
                              const node::MountOptions& options, bool format, StageReply reply) {
  const bool redo = format && row.state == store::kFormatting;
  engine::RunBlocking(
      loop_->uv(),
      [found, path = row.staging_path, fs_type = row.fs_type, options, format, redo] {
        return node::FormatAndMount(found, path, fs_type, options, format, redo);
      },
      [this, alive = alive_, row, found, format, reply](Status mounted) mutable {
        if (!*alive) return;
        if (!mounted.ok()) return FailStaging(row, mounted, reply);
        row.state = store::kStaged;
        store_.PutStaging(row);
        log::Info("volume staged", {{"volume_id", row.volume_id},
                                    {"device", found.node},
                                    {"path", row.staging_path},
                                    {"formatted", format ? "yes" : "no"}});
        AnswerWhenDurable(row.volume_id, reply, Status::Ok());
      });
}

void NodeService::FailStaging(const StagingRow& row, const Status& status, StageReply reply) {
  if (row.state == store::kFormatting) {
    store_.PutStaging(row);  // the format intent stays for the retry
  } else {
    store_.DeleteStaging(row.volume_id);  // nothing was mounted: the retry starts over
  }
  log::Warn("staging failed", {{"volume_id", row.volume_id}, {"error", status.message()}});
  AnswerWhenDurable(row.volume_id, reply, status);
}

void NodeService::NodeUnstageVolume(const rpc::CallInfo&,
                                    const csi::v1::NodeUnstageVolumeRequest& request,
                                    rpc::Reply<csi::v1::NodeUnstageVolumeResponse> reply) {
  const std::string& volume_id = request.volume_id();
  const std::string& path = request.staging_target_path();
  if (Status checked = CheckNodeUnstageVolume(request); !checked.ok()) return reply.Fail(checked);
  if (!Begin(volume_id, "NodeUnstageVolume", reply)) return;
  std::optional<StagingRow> existing = store_.GetStaging(volume_id);
  std::vector<PublicationRow> publications = store_.PublicationsOf(volume_id);
  for (const PublicationRow& publication : publications) {
    if (publication.state != store::kStale) {
      End(volume_id);
      reply.Fail(FailedPrecondition("volume " + volume_id + " is still published at " +
                                    publication.target_path + "; call NodeUnpublishVolume first"));
      return;
    }
  }
  std::optional<StagingRow> row;
  // A format intent is not a staging: it stays (its device is never mounted while it does), so
  // that a later stage of this volume can still finish the interrupted format.
  if (existing && existing->staging_path == path && existing->state != store::kFormatting) {
    row = existing;
  }
  std::optional<node::BlockDevice> device;
  if (row) {
    device = engine::StagedDevice(*row);
    row->state = store::kUnstaging;
    store_.PutStaging(*row);
  }
  bool block = row && row->block;
  auto shared_reply = rpc::Share(std::move(reply));
  ContinueWhenDurable(volume_id, shared_reply, [=, this] {
    engine::RunBlocking(
        loop_->uv(),
        [device, block, path] {
          return node::UnmountAndRemove(device ? &*device : nullptr, block, path, true);
        },
        [this, alive = alive_, row, volume_id, publications, shared_reply](Status st) mutable {
          if (!*alive) return;
          if (!st.ok()) {
            if (row) {
              row->state = store::kStaged;
              store_.PutStaging(*row);
            }
            return AnswerWhenDurable(volume_id, shared_reply, st);
          }
          if (row) {
            for (const PublicationRow& stale : publications)
              store_.DeletePublication(stale.target_path);
            store_.DeleteStaging(volume_id);
            log::Info("volume unstaged", {{"volume_id", volume_id}, {"path", row->staging_path}});
          }
          AnswerWhenDurable(volume_id, shared_reply, Status::Ok());
        });
  });
}

void NodeService::NodePublishVolume(const rpc::CallInfo&,
                                    const csi::v1::NodePublishVolumeRequest& request,
                                    rpc::Reply<csi::v1::NodePublishVolumeResponse> reply) {
  const std::string& volume_id = request.volume_id();
  const std::string& target = request.target_path();
  StatusOr<CapabilitySpec> capability = CheckNodePublishVolume(request);
  if (!capability.ok()) return reply.Fail(capability.status());
  if (!Idle(volume_id, "NodePublishVolume", reply)) return;
  bool readonly =
      request.readonly() ||
      capability->mode == csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_READER_ONLY;
  std::optional<StagingRow> staging = store_.GetStaging(volume_id);
  std::optional<PublicationRow> existing = store_.GetPublication(target);
  if (!staging || staging->state != store::kStaged ||
      staging->staging_path != request.staging_target_path()) {
    reply.Fail(FailedPrecondition("volume " + volume_id + " is not staged at " +
                                  request.staging_target_path() + "; call NodeStageVolume first"));
    return;
  }
  const StagingRow& staged = *staging;
  if (staged.block != capability->block) {
    reply.Fail(InvalidArgument(std::string("volume ") + volume_id + " was staged as a " +
                               (staged.block ? "block" : "mount") +
                               " volume; it cannot be published as a " +
                               (capability->block ? "block" : "mount") + " volume"));
    return;
  }
  if (existing && !Transitional(existing->state)) {
    if (existing->volume_id != volume_id) {
      reply.Fail(
          AlreadyExists("target_path " + target + " is in use by volume " + existing->volume_id));
      return;
    }
    if (existing->capability != capability->key || existing->readonly != readonly) {
      reply.Fail(AlreadyExists("volume " + volume_id + " is already published at " + target +
                               " with another capability or readonly setting"));
      return;
    }
    if (existing->state == store::kPublished) {
      reply.Ok({});
      return;
    }
  }
  if (capability->mode == csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_SINGLE_WRITER) {
    for (const PublicationRow& other : store_.PublicationsOf(volume_id)) {
      if (other.target_path != target && other.state == store::kPublished) {
        reply.Fail(FailedPrecondition("volume " + volume_id +
                                      " has access mode SINGLE_NODE_SINGLE_WRITER and is already "
                                      "published at " +
                                      other.target_path));
        return;
      }
    }
  }
  auto device = engine::StagedDevice(staged);
  if (!device) {
    reply.Fail(Internal("volume " + volume_id + " is staged without a known device"));
    return;
  }
  if (!Begin(volume_id, "NodePublishVolume", reply)) return;
  PublicationRow row{.target_path = target,
                     .volume_id = volume_id,
                     .state = store::kPublishing,
                     .staging_path = staged.staging_path,
                     .capability = capability->key,
                     .readonly = readonly};
  store_.PutPublication(row);
  bool block = staged.block;
  std::string source = block ? device->node : staged.staging_path;
  node::MountOptions options = block ? node::MountOptions{} : capability->options;
  auto shared_reply = rpc::Share(std::move(reply));
  ContinueWhenDurable(volume_id, shared_reply, [=, this, device = *device] {
    engine::RunBlocking(
        loop_->uv(),
        [device, block, source, target, readonly, options] {
          return node::PublishBind(device, block, source, target, readonly, options);
        },
        [this, alive = alive_, row, shared_reply](Status st) mutable {
          if (!*alive) return;
          if (!st.ok()) {
            store_.DeletePublication(row.target_path);
            log::Warn("publishing failed", {{"volume_id", row.volume_id}, {"error", st.message()}});
            return AnswerWhenDurable(row.volume_id, shared_reply, st);
          }
          row.state = store::kPublished;
          store_.PutPublication(row);
          log::Info("volume published", {{"volume_id", row.volume_id},
                                         {"path", row.target_path},
                                         {"readonly", row.readonly ? "yes" : "no"}});
          AnswerWhenDurable(row.volume_id, shared_reply, Status::Ok());
        });
  });
}

void NodeService::NodeUnpublishVolume(const rpc::CallInfo&,
                                      const csi::v1::NodeUnpublishVolumeRequest& request,
                                      rpc::Reply<csi::v1::NodeUnpublishVolumeResponse> reply) {
  const std::string& volume_id = request.volume_id();
  const std::string& target = request.target_path();
  if (Status checked = CheckNodeUnpublishVolume(request); !checked.ok()) return reply.Fail(checked);
  std::optional<PublicationRow> row = store_.GetPublication(target);
  std::optional<StagingRow> staging = store_.GetStaging(volume_id);
  if (row && row->volume_id != volume_id) {
    reply.Fail(FailedPrecondition("target_path " + target + " belongs to volume " + row->volume_id +
                                  ", not " + volume_id));
    return;
  }
  if (!Begin(volume_id, "NodeUnpublishVolume", reply)) return;
  std::optional<node::BlockDevice> device;
  bool block = false;
  if (staging) {
    device = engine::StagedDevice(*staging);
    block = staging->block;
  }
  if (row) {
    row->state = store::kUnpublishing;
    store_.PutPublication(*row);
  }
  auto shared_reply = rpc::Share(std::move(reply));
  ContinueWhenDurable(volume_id, shared_reply, [=, this] {
    engine::RunBlocking(
        loop_->uv(),
        [device, block, target] {
          return node::UnmountAndRemove(device ? &*device : nullptr, block, target, true);
        },
        [this, alive = alive_, row, volume_id, shared_reply](Status st) mutable {
          if (!*alive) return;
          if (!st.ok()) {
            if (row) {
              row->state = store::kPublished;
              store_.PutPublication(*row);
            }
            return AnswerWhenDurable(volume_id, shared_reply, st);
          }
          if (row) {
            store_.DeletePublication(row->target_path);
            log::Info("volume unpublished", {{"volume_id", volume_id}, {"path", row->target_path}});
          }
          AnswerWhenDurable(volume_id, shared_reply, Status::Ok());
        });
  });
}

template <typename Response>
void NodeService::ContinueWhenDurable(const std::string& volume_id,
                                      std::shared_ptr<rpc::Reply<Response>> reply,
                                      std::function<void()> next) {
  commit_->WhenDurable(
      [this, alive = alive_, volume_id, reply, next = std::move(next)](Status committed) {
        if (!*alive) return;
        if (committed.ok()) return next();
        End(volume_id);
        reply->Fail(Unavailable("the node's state database failed: " + committed.message()));
      });
}

template <typename Response>
void NodeService::AnswerWhenDurable(const std::string& volume_id,
                                    std::shared_ptr<rpc::Reply<Response>> reply, Status outcome) {
  commit_->WhenDurable([this, alive = alive_, volume_id, reply,
                        outcome = std::move(outcome)](Status committed) {
    if (!*alive) return;
    End(volume_id);
    if (!outcome.ok()) return reply->Fail(outcome);
    if (!committed.ok()) {
      return reply->Fail(Unavailable("the node's state database failed: " + committed.message()));
    }
    reply->Ok({});
  });
}

void NodeService::NodeGetVolumeStats(const rpc::CallInfo&,
                                     const csi::v1::NodeGetVolumeStatsRequest& request,
                                     rpc::Reply<csi::v1::NodeGetVolumeStatsResponse> reply) {
  const std::string& volume_id = request.volume_id();
  const std::string& path = request.volume_path();
  // The spec's order: a volume not known at that path is NOT_FOUND whatever the path looks like
  // (the lookups are in memory; no path is touched before it is known and checked).
  if (Status checked = CheckNodeGetVolumeStats(request); !checked.ok()) return reply.Fail(checked);
  std::optional<StagingRow> staging = store_.GetStaging(volume_id);
  std::optional<PublicationRow> publication = store_.GetPublication(path);
  bool published = publication && publication->volume_id == volume_id &&
                   publication->state != store::kUnpublishing;
  bool staged_here = staging && staging->staging_path == path;
  std::optional<node::BlockDevice> device = staging ? engine::StagedDevice(*staging) : std::nullopt;
  if ((!published && !staged_here) || !device) {
    reply.Fail(NotFound("volume " + volume_id + " is neither published nor staged at " + path));
    return;
  }
  if (!Check(reply, {node::CheckVolumePath("volume_path", path)})) return;
  bool block = staging->block;
  bool expect_mount = published || !block;
  bool readonly = published && publication->readonly;
  struct Stats {
    std::string problem;
    StatusOr<node::FilesystemUsage> usage = Internal("not read");
    StatusOr<int64_t> bytes = Internal("not read");
  };
  engine::RunBlocking(
      loop_->uv(),
      [root = settings_.sysfs_root, device = *device, block, path, expect_mount,
       readonly]() -> StatusOr<Stats> {
        Stats stats;
        stats.problem = node::VolumeProblem(root, device, block, path, expect_mount, readonly);
        if (block) {
          stats.bytes = node::BlockDeviceBytes(device.node);
        } else if (stats.problem.empty() || stats.problem.find("read-only") != std::string::npos) {
          stats.usage = node::UsageOf(path);
        }
        return stats;
      },
      [reply = std::move(reply)](StatusOr<Stats> stats) mutable {
        if (!stats.ok()) {
          reply.Fail(stats.status());
          return;
        }
        csi::v1::NodeGetVolumeStatsResponse response;
        auto add = [&response](csi::v1::VolumeUsage::Unit unit, int64_t total, int64_t used,
                               int64_t available) {
          auto* usage = response.add_usage();
          usage->set_unit(unit);
          usage->set_total(total);
          usage->set_used(used);
          usage->set_available(available);
        };
        if (stats->usage.ok()) {
          const node::FilesystemUsage& u = *stats->usage;
          add(csi::v1::VolumeUsage::BYTES, u.bytes_total, u.bytes_used, u.bytes_available);
          add(csi::v1::VolumeUsage::INODES, u.inodes_total, u.inodes_used, u.inodes_available);
        } else if (stats->bytes.ok()) {
          response.add_usage()->set_unit(csi::v1::VolumeUsage::BYTES);
          response.mutable_usage(0)->set_total(*stats->bytes);
        }
        response.mutable_volume_condition()->set_abnormal(!stats->problem.empty());
        response.mutable_volume_condition()->set_message(stats->problem.empty() ? "healthy"
                                                                                : stats->problem);
        reply.Ok(std::move(response));
      });
}

void NodeService::Register(rpc::CsiHandlers& handlers) {
#define OXIDE_NODE_HANDLER(name)                                  \
  handlers.name = [this](auto& info, auto& request, auto reply) { \
    name(info, request, std::move(reply));                        \
  };
  OXIDE_NODE_HANDLER(NodeGetInfo)
  OXIDE_NODE_HANDLER(NodeGetCapabilities)
  OXIDE_NODE_HANDLER(NodeStageVolume)
  OXIDE_NODE_HANDLER(NodeUnstageVolume)
  OXIDE_NODE_HANDLER(NodePublishVolume)
  OXIDE_NODE_HANDLER(NodeUnpublishVolume)
  OXIDE_NODE_HANDLER(NodeGetVolumeStats)
#undef OXIDE_NODE_HANDLER
}

}  // namespace oxide::csi_adapter
