#include "support/node_client.h"

#include "support/plugin_process.h"

namespace oxide::testing {

void NodeClient::Connect(const std::string& socket_path) {
  stub_ = csi::v1::Node::NewStub(UnixChannel(socket_path));
}

csi::v1::VolumeCapability NodeClient::MountCapability(const std::string& fs_type,
                                                      std::vector<std::string> flags) {
  csi::v1::VolumeCapability capability;
  capability.mutable_mount()->set_fs_type(fs_type);
  for (const std::string& flag : flags)
    capability.mutable_mount()->add_mount_flags(flag);
  capability.mutable_access_mode()->set_mode(
      csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return capability;
}

csi::v1::VolumeCapability NodeClient::BlockCapability() {
  csi::v1::VolumeCapability capability;
  capability.mutable_block();
  capability.mutable_access_mode()->set_mode(
      csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return capability;
}

grpc::Status NodeClient::Stage(const std::string& volume_id, const std::string& disk_name,
                               const std::string& staging,
                               const csi::v1::VolumeCapability& capability) {
  return Stage(volume_id, disk_name, staging, capability, {}, {});
}

grpc::Status NodeClient::Stage(const std::string& volume_id, const std::string& disk_name,
                               const std::string& staging,
                               const csi::v1::VolumeCapability& capability,
                               const std::map<std::string, std::string>& volume_context) {
  return Stage(volume_id, disk_name, staging, capability, volume_context, {});
}

grpc::Status NodeClient::Stage(const std::string& volume_id, const std::string& disk_name,
                               const std::string& staging,
                               const csi::v1::VolumeCapability& capability,
                               const std::map<std::string, std::string>& volume_context,
                               const std::map<std::string, std::string>& secrets) {
  csi::v1::NodeStageVolumeRequest request;
  for (const auto& [key, value] : volume_context)
    (*request.mutable_volume_context())[key] = value;
  for (const auto& [key, value] : secrets)
    (*request.mutable_secrets())[key] = value;
  request.set_volume_id(volume_id);
  request.set_staging_target_path(staging);
  *request.mutable_volume_capability() = capability;
  if (!disk_name.empty()) {
    (*request.mutable_publish_context())["diskName"] = disk_name;
    (*request.mutable_publish_context())["nvmeSerial"] = disk_name.substr(0, 20);
  }
  grpc::ClientContext context;
  csi::v1::NodeStageVolumeResponse response;
  return stub_->NodeStageVolume(&context, request, &response);
}

grpc::Status NodeClient::Unstage(const std::string& volume_id, const std::string& staging) {
  csi::v1::NodeUnstageVolumeRequest request;
  request.set_volume_id(volume_id);
  request.set_staging_target_path(staging);
  grpc::ClientContext context;
  csi::v1::NodeUnstageVolumeResponse response;
  return stub_->NodeUnstageVolume(&context, request, &response);
}

grpc::Status NodeClient::Publish(const std::string& volume_id, const std::string& staging,
                                 const std::string& target,
                                 const csi::v1::VolumeCapability& capability, bool readonly) {
  csi::v1::NodePublishVolumeRequest request;
  request.set_volume_id(volume_id);
  request.set_staging_target_path(staging);
  request.set_target_path(target);
  request.set_readonly(readonly);
  *request.mutable_volume_capability() = capability;
  grpc::ClientContext context;
  csi::v1::NodePublishVolumeResponse response;
  return stub_->NodePublishVolume(&context, request, &response);
}

grpc::Status NodeClient::Unpublish(const std::string& volume_id, const std::string& target) {
  csi::v1::NodeUnpublishVolumeRequest request;
  request.set_volume_id(volume_id);
  request.set_target_path(target);
  grpc::ClientContext context;
  csi::v1::NodeUnpublishVolumeResponse response;
  return stub_->NodeUnpublishVolume(&context, request, &response);
}

grpc::Status NodeClient::Stats(const std::string& volume_id, const std::string& path,
                               csi::v1::NodeGetVolumeStatsResponse* response) {
  csi::v1::NodeGetVolumeStatsRequest request;
  request.set_volume_id(volume_id);
  request.set_volume_path(path);
  grpc::ClientContext context;
  return stub_->NodeGetVolumeStats(&context, request, response);
}

}  // namespace oxide::testing
