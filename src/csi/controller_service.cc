#include "csi/controller_service.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/validation.h"
#include "csi/csi_context_keys.h"
#include "csi/filesystem_options.h"
#include "csi/handler_install.h"
#include "csi/paged_listing.h"
#include "csi/request_checks.h"
#include "csi/volume_request.h"
#include "engine/disk_naming.h"

namespace oxide::csi_adapter {
namespace {

using backend::Disk;
using rpc::Share;

}  // namespace

ControllerService::ControllerService(const Settings& settings, backend::OxideClient* oxide,
                                     engine::VolumeEngine* engine,
                                     engine::SnapshotEngine* snapshots)
    : zone_(settings.topology_zone),
      default_size_(static_cast<uint64_t>(settings.default_volume_size_gib) * kGiB),
      advertise_get_snapshot_(settings.advertised_csi_minor >= 12),
      oxide_(oxide),
      engine_(engine),
      snapshots_(snapshots),
      node_instances_(oxide) {}

void ControllerService::FillVolume(const Disk& disk, csi::v1::Volume* volume) const {
  volume->set_volume_id(disk.id);
  volume->set_capacity_bytes(static_cast<int64_t>(disk.size));
  (*volume->mutable_volume_context())[kDiskNameKey] = disk.name;
  (*volume->mutable_volume_context())[kDiskTypeKey] =
      disk.disk_type.empty() ? backend::kDiskTypeDistributed : disk.disk_type;
  (*volume->add_accessible_topology()->mutable_segments())[kTopologyKey] = zone_;
}

// ---- CreateVolume ---------------------------------------------------------------------------

void ControllerService::CreateVolume(const rpc::CallInfo&,
                                     const csi::v1::CreateVolumeRequest& request,
                                     rpc::Reply<csi::v1::CreateVolumeResponse> reply) {
  StatusOr<CreateVolumeChecks> checked = CheckCreateVolume(request, zone_, default_size_);
  if (!checked.ok()) return reply.Fail(checked.status());
  const VolumeParameters& params = checked->params;
  const bool clone = request.volume_content_source().has_volume();
  engine::CreateSpec spec{
      .co_name = request.name(),
      .disk_name = engine::DiskNameFor(request.name()),
      .description =
          clone ? engine::CloneDescriptionFor(request.name(), params.pvc_namespace, params.pvc_name,
                                              request.volume_content_source().volume().volume_id())
                : engine::DescriptionFor(request.name(), params.pvc_namespace, params.pvc_name),
      .size = checked->size,
      .required = static_cast<uint64_t>(request.capacity_range().required_bytes()),
      .limit = static_cast<uint64_t>(request.capacity_range().limit_bytes()),
      .block_size = params.block_size,
      .block_size_requested = params.block_size_given,
      .snapshot_id = "",
      .clone_source = "",
      .disk_type = params.disk_type};
  // What the node needs besides the disk: the filesystem options and whether it encrypts.
  std::map<std::string, std::string> context = checked->fs_context;
  if (params.encrypted) context[kEncryptedParameter] = "true";
  auto shared = Share(std::move(reply));
  if (request.has_volume_content_source()) {
    // With no capacity_range a restored or cloned volume is exactly as big as its source.
    if (!request.has_capacity_range()) spec.size = 0;
    return CreateFromSource(spec, request.volume_content_source(), RequestFingerprint(request),
                            shared, std::move(context));
  }
  engine_->Create(spec, RequestFingerprint(request),
                  VolumeAnswer(shared, std::nullopt, std::move(context)));
}

engine::OperationWaiter ControllerService::VolumeAnswer(
    SharedCreateReply reply, std::optional<csi::v1::VolumeContentSource> source,
    std::map<std::string, std::string> context) {
  return [this, reply, source, context](const engine::OperationResult& result) {
    if (!result.ok()) return reply->Fail(result.status());
    csi::v1::CreateVolumeResponse response;
    FillVolume(*result, response.mutable_volume());
    response.mutable_volume()->mutable_volume_context()->insert(context.begin(), context.end());
    if (source) *response.mutable_volume()->mutable_content_source() = *source;
    reply->Ok(std::move(response));
  };
}

// ---- DeleteVolume ---------------------------------------------------------------------------

void ControllerService::DeleteVolume(const rpc::CallInfo&,
                                     const csi::v1::DeleteVolumeRequest& request,
                                     rpc::Reply<csi::v1::DeleteVolumeResponse> reply) {
  if (Status checked = CheckDeleteVolume(request); !checked.ok()) return reply.Fail(checked);
  // Only Oxide disk ids are volume ids: anything else cannot exist, so it is already deleted.
  if (!IsUuid(request.volume_id())) return reply.Ok({});
  auto shared = Share(std::move(reply));
  engine_->Delete(request.volume_id(), [shared](const engine::OperationResult& result) {
    if (!result.ok()) return shared->Fail(result.status());
    shared->Ok({});
  });
}

// ---- ControllerPublishVolume ----------------------------------------------------------------

void ControllerService::ControllerPublishVolume(
    const rpc::CallInfo&, const csi::v1::ControllerPublishVolumeRequest& request,
    rpc::Reply<csi::v1::ControllerPublishVolumeResponse> reply) {
  if (Status checked = CheckControllerPublishVolume(request); !checked.ok()) {
    return reply.Fail(checked);
  }
  auto shared = Share(std::move(reply));
  // A "name:<instance>" node id is looked up first; the engine deals in instance ids.
  node_instances_.Resolve(request.node_id(), [this, shared, volume_id = request.volume_id(),
                                              fingerprint = RequestFingerprint(request)](
                                                 StatusOr<std::string> instance) {
    if (!instance.ok()) return shared->Fail(instance.status());
    engine_->Publish(volume_id, *instance, fingerprint,
                     [shared](const engine::OperationResult& result) {
                       if (!result.ok()) return shared->Fail(result.status());
                       csi::v1::ControllerPublishVolumeResponse response;
                       auto& context = *response.mutable_publish_context();
                       context[kDiskNameKey] = result->name;
                       context[kNvmeSerialKey] = engine::NvmeSerialOf(result->name);
                       context[kDiskSizeBytesKey] = std::to_string(result->size);
                       shared->Ok(std::move(response));
                     });
  });
}

// ---- ControllerUnpublishVolume --------------------------------------------------------------

void ControllerService::ControllerUnpublishVolume(
    const rpc::CallInfo&, const csi::v1::ControllerUnpublishVolumeRequest& request,
    rpc::Reply<csi::v1::ControllerUnpublishVolumeResponse> reply) {
  if (Status checked = CheckControllerUnpublishVolume(request); !checked.ok()) {
    return reply.Fail(checked);
  }
  // A volume or node that cannot exist is not published there.
  if (!IsUuid(request.volume_id())) return reply.Ok({});
  auto shared = Share(std::move(reply));
  auto unpublish = [this, shared, volume_id = request.volume_id()](const std::string& instance) {
    engine_->Unpublish(volume_id, instance, [shared](const engine::OperationResult& result) {
      if (!result.ok()) return shared->Fail(result.status());
      shared->Ok({});
    });
  };
  if (request.node_id().empty()) return unpublish("");  // from whichever instance holds it
  node_instances_.Resolve(request.node_id(), [shared, unpublish](StatusOr<std::string> instance) {
    // No such node (a non-UUID id, an instance name that does not exist): nothing to detach.
    if (!instance.ok() && instance.status().code() == StatusCode::kNotFound) {
      return shared->Ok({});
    }
    if (!instance.ok()) return shared->Fail(instance.status());
    unpublish(*instance);
  });
}

// ---- read-only RPCs -------------------------------------------------------------------------

void ControllerService::ValidateVolumeCapabilities(
    const rpc::CallInfo&, const csi::v1::ValidateVolumeCapabilitiesRequest& request,
    rpc::Reply<csi::v1::ValidateVolumeCapabilitiesResponse> reply) {
  if (Status checked = CheckValidateVolumeCapabilities(request); !checked.ok()) {
    return reply.Fail(checked);
  }
  auto shared = Share(std::move(reply));
  oxide_->GetDisk(request.volume_id(), [shared, request](StatusOr<Disk> disk) {
    if (!disk.ok()) return shared->Fail(disk.status());
    csi::v1::ValidateVolumeCapabilitiesResponse response;
    Status supported = CheckCapabilities(request.volume_capabilities());
    StatusOr<VolumeParameters> params = ParseParameters(request.parameters());
    if (supported.ok()) supported = params.status();
    if (supported.ok()) {
      supported = CheckFilesystemParameters(request.parameters(), request.volume_capabilities(),
                                            params->block_size)
                      .status();
    }
    if (!supported.ok()) {
      response.set_message(supported.message());
    } else {
      auto* confirmed = response.mutable_confirmed();
      *confirmed->mutable_volume_context() = request.volume_context();
      *confirmed->mutable_volume_capabilities() = request.volume_capabilities();
      *confirmed->mutable_parameters() = request.parameters();
    }
    shared->Ok(std::move(response));
  });
}

void ControllerService::ControllerGetVolume(
    const rpc::CallInfo&, const csi::v1::ControllerGetVolumeRequest& request,
    rpc::Reply<csi::v1::ControllerGetVolumeResponse> reply) {
  if (Status checked = CheckControllerGetVolume(request); !checked.ok()) return reply.Fail(checked);
  auto shared = Share(std::move(reply));
  oxide_->GetDisk(request.volume_id(), [this, shared](StatusOr<Disk> disk) {
    if (!disk.ok()) return shared->Fail(disk.status());
    auto response = std::make_shared<csi::v1::ControllerGetVolumeResponse>();
    FillVolume(*disk, response->mutable_volume());
    auto* status = response->mutable_status();
    bool faulted = disk->state.status == backend::DiskStatus::kFaulted;
    status->mutable_volume_condition()->set_abnormal(faulted);
    status->mutable_volume_condition()->set_message(
        faulted ? "Oxide reports disk " + disk->name + " faulted"
                : std::string("disk is ") + backend::DiskStatusName(disk->state.status));
    if (disk->state.instance.empty()) return shared->Ok(std::move(*response));
    node_instances_.NodeIdsOf(
        {disk->state.instance},
        [shared, response, instance = disk->state.instance](NodeInstances::NodeIds ids) {
          for (const std::string& id : ids[instance]) {
            response->mutable_status()->add_published_node_ids(id);
          }
          shared->Ok(std::move(*response));
        });
  });
}

void ControllerService::ListVolumes(const rpc::CallInfo&,
                                    const csi::v1::ListVolumesRequest& request,
                                    rpc::Reply<csi::v1::ListVolumesResponse> reply) {
  StatusOr<std::string> token = CheckListVolumes(request);
  if (!token.ok()) return reply.Fail(token.status());
  using Response = csi::v1::ListVolumesResponse;
  auto listing = std::make_shared<PagedListing<Disk, Response>>();
  listing->list = [this](const backend::PageRequest& page,
                         backend::Done<backend::Page<Disk>> done) {
    oxide_->ListDisks(page, std::move(done));
  };
  listing->add = [this](const Disk& disk, Response* response) {
    if (!engine::IsPluginDiskName(disk.name)) return;
    auto* entry = response->add_entries();
    FillVolume(disk, entry->mutable_volume());
    auto* status = entry->mutable_status();
    if (!disk.state.instance.empty()) status->add_published_node_ids(disk.state.instance);
    bool faulted = disk.state.status == backend::DiskStatus::kFaulted;
    status->mutable_volume_condition()->set_abnormal(faulted);
    if (faulted) status->mutable_volume_condition()->set_message("Oxide reports the disk faulted");
  };
  listing->entries = [](const Response& response) { return response.entries_size(); };
  listing->set_next_token = [](Response* response, const std::string& next) {
    response->set_next_token(next);
  };
  auto shared = Share(std::move(reply));
  listing->done = [this, shared](StatusOr<Response> listed) {
    if (!listed.ok()) return shared->Fail(listed.status());
    // Each instance id gets its name form too (NodeInstances): the CO may know the node by either.
    std::set<std::string> instances;
    for (const auto& entry : listed->entries()) {
      for (const std::string& id : entry.status().published_node_ids())
        instances.insert(id);
    }
    if (instances.empty()) return shared->Ok(std::move(*listed));
    auto response = std::make_shared<Response>(std::move(*listed));
    node_instances_.NodeIdsOf(instances, [shared, response](NodeInstances::NodeIds ids) {
      for (auto& entry : *response->mutable_entries()) {
        auto* published = entry.mutable_status()->mutable_published_node_ids();
        std::vector<std::string> held(published->begin(), published->end());
        published->Clear();
        for (const std::string& instance : held) {
          for (const std::string& id : ids[instance])
            published->Add(std::string(id));
        }
      }
      shared->Ok(std::move(*response));
    });
  };
  ListPages(listing, std::make_shared<Response>(), static_cast<uint32_t>(request.max_entries()),
            *token);
}

void ControllerService::GetCapacity(const rpc::CallInfo&,
                                    const csi::v1::GetCapacityRequest& request,
                                    rpc::Reply<csi::v1::GetCapacityResponse> reply) {
  if (Status checked = CheckGetCapacity(request); !checked.ok()) return reply.Fail(checked);
  if (request.has_accessible_topology() && !TopologyMatches(request.accessible_topology(), zone_)) {
    return reply.Ok({});  // another zone: nothing available here
  }
  auto shared = Share(std::move(reply));
  oxide_->GetUtilization([shared](StatusOr<backend::Utilization> utilization) {
    if (!utilization.ok()) return shared->Fail(utilization.status());
    uint64_t quota = utilization->capacity.storage;
    uint64_t used = utilization->provisioned.storage;
    uint64_t available = quota > used ? quota - used : 0;
    csi::v1::GetCapacityResponse response;
    response.set_available_capacity(static_cast<int64_t>(available));
    uint64_t largest = std::min(available / kGiB * kGiB, kMaxDiskBytes);
    if (largest >= kMinDiskBytes) {
      response.mutable_maximum_volume_size()->set_value(static_cast<int64_t>(largest));
    }
    response.mutable_minimum_volume_size()->set_value(static_cast<int64_t>(kMinDiskBytes));
    shared->Ok(std::move(response));
  });
}

void ControllerService::ControllerGetCapabilities(
    const rpc::CallInfo&, const csi::v1::ControllerGetCapabilitiesRequest&,
    rpc::Reply<csi::v1::ControllerGetCapabilitiesResponse> reply) {
  using Rpc = csi::v1::ControllerServiceCapability::RPC;
  csi::v1::ControllerGetCapabilitiesResponse response;
  for (auto type : {Rpc::CREATE_DELETE_VOLUME, Rpc::PUBLISH_UNPUBLISH_VOLUME, Rpc::LIST_VOLUMES,
                    Rpc::LIST_VOLUMES_PUBLISHED_NODES, Rpc::GET_VOLUME, Rpc::VOLUME_CONDITION,
                    Rpc::GET_CAPACITY, Rpc::SINGLE_NODE_MULTI_WRITER, Rpc::CREATE_DELETE_SNAPSHOT,
                    Rpc::LIST_SNAPSHOTS, Rpc::CLONE_VOLUME}) {
    response.add_capabilities()->mutable_rpc()->set_type(type);
  }
  if (advertise_get_snapshot_) {  // new in CSI v1.12
    response.add_capabilities()->mutable_rpc()->set_type(Rpc::GET_SNAPSHOT);
  }
  reply.Ok(std::move(response));
}

void ControllerService::Register(rpc::CsiHandlers& handlers) {
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, CreateVolume);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, DeleteVolume);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, ControllerPublishVolume);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, ControllerUnpublishVolume);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, ValidateVolumeCapabilities);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, ListVolumes);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, GetCapacity);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, ControllerGetCapabilities);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, ControllerGetVolume);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, CreateSnapshot);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, DeleteSnapshot);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, ListSnapshots);
  OXIDE_CSI_INSTALL_HANDLER(handlers, ControllerService, GetSnapshot);
}

}  // namespace oxide::csi_adapter
