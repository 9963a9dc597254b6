// Guards the CSI protobuf against accidental edits: the package, the services and their RPCs,
// field numbers of the messages the plugin serves, and the csi_secret option on every secrets
// field. The expected values are those of the public csi.proto (v1.12).
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include "csi.pb.h"

namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;

const Descriptor* Message(const std::string& name) {
  const Descriptor* d = DescriptorPool::generated_pool()->FindMessageTypeByName("csi.v1." + name);
  EXPECT_NE(d, nullptr) << name;
  return d;
}

int FieldNumber(const std::string& message, const std::string& field) {
  const Descriptor* d = Message(message);
  if (d == nullptr) return -1;
  const FieldDescriptor* f = d->FindFieldByName(field);
  return f == nullptr ? -1 : f->number();
}

TEST(CsiProto, ServicesAndMethods) {
  const auto* file = csi::v1::CreateVolumeRequest::descriptor()->file();
  EXPECT_EQ(file->package(), "csi.v1");
  std::map<std::string, int> methods = {{"Identity", 3},
                                        {"Controller", 15},
                                        {"Node", 8},
                                        {"GroupController", 4},
                                        {"SnapshotMetadata", 2}};
  ASSERT_EQ(file->service_count(), 5);
  for (int i = 0; i < file->service_count(); ++i) {
    const auto* service = file->service(i);
    ASSERT_TRUE(methods.count(service->name())) << service->name();
    EXPECT_EQ(service->method_count(), methods[service->name()]) << service->name();
  }
}

TEST(CsiProto, FieldNumbersMatchThePublicSpecification) {
  struct Expect {
    const char* message;
    const char* field;
    int number;
  };
  const Expect expected[] = {
      {"GetPluginInfoResponse", "name", 1},
      {"GetPluginInfoResponse", "vendor_version", 2},
      {"GetPluginInfoResponse", "manifest", 3},
      {"ProbeResponse", "ready", 1},
      {"PluginCapability", "service", 1},
      {"PluginCapability", "volume_expansion", 2},
      {"CreateVolumeRequest", "name", 1},
      {"CreateVolumeRequest", "capacity_range", 2},
      {"CreateVolumeRequest", "volume_capabilities", 3},
      {"CreateVolumeRequest", "parameters", 4},
      {"CreateVolumeRequest", "secrets", 5},
      {"CreateVolumeRequest", "volume_content_source", 6},
      {"CreateVolumeRequest", "accessibility_requirements", 7},
      {"CreateVolumeRequest", "mutable_parameters", 8},
      {"Volume", "capacity_bytes", 1},
      {"Volume", "volume_id", 2},
      {"Volume", "volume_context", 3},
      {"Volume", "content_source", 4},
      {"Volume", "accessible_topology", 5},
      {"VolumeCapability", "block", 1},
      {"VolumeCapability", "mount", 2},
      {"VolumeCapability", "access_mode", 3},
      {"ControllerPublishVolumeRequest", "volume_id", 1},
      {"ControllerPublishVolumeRequest", "node_id", 2},
      {"ControllerPublishVolumeRequest", "volume_capability", 3},
      {"ControllerPublishVolumeRequest", "readonly", 4},
      {"ControllerPublishVolumeRequest", "secrets", 5},
      {"ControllerPublishVolumeRequest", "volume_context", 6},
      {"ListVolumesRequest", "max_entries", 1},
      {"ListVolumesRequest", "starting_token", 2},
      {"ListVolumesResponse", "entries", 1},
      {"ListVolumesResponse", "next_token", 2},
      {"GetCapacityResponse", "available_capacity", 1},
      {"GetCapacityResponse", "maximum_volume_size", 2},
      {"GetCapacityResponse", "minimum_volume_size", 3},
      {"Snapshot", "size_bytes", 1},
      {"Snapshot", "snapshot_id", 2},
      {"Snapshot", "source_volume_id", 3},
      {"Snapshot", "creation_time", 4},
      {"Snapshot", "ready_to_use", 5},
      {"Snapshot", "group_snapshot_id", 6},
      {"ListSnapshotsRequest", "source_volume_id", 3},
      {"ListSnapshotsRequest", "snapshot_id", 4},
      {"GetSnapshotRequest", "snapshot_id", 1},
      {"GetSnapshotRequest", "secrets", 2},
      {"GetSnapshotResponse", "snapshot", 1},
      {"NodeStageVolumeRequest", "staging_target_path", 3},
      {"NodeStageVolumeRequest", "volume_capability", 4},
      {"NodeStageVolumeRequest", "volume_context", 6},
      {"NodePublishVolumeRequest", "target_path", 4},
      {"NodePublishVolumeRequest", "readonly", 6},
      {"NodePublishVolumeRequest", "volume_context", 8},
      {"NodeGetVolumeStatsRequest", "staging_target_path", 3},
      {"NodeGetVolumeStatsResponse", "volume_condition", 2},
      {"VolumeUsage", "available", 1},
      {"VolumeUsage", "total", 2},
      {"VolumeUsage", "used", 3},
      {"VolumeUsage", "unit", 4},
      {"NodeGetInfoResponse", "node_id", 1},
      {"NodeGetInfoResponse", "max_volumes_per_node", 2},
      {"NodeGetInfoResponse", "accessible_topology", 3},
  };
  for (const Expect& e : expected) {
    EXPECT_EQ(FieldNumber(e.message, e.field), e.number) << e.message << "." << e.field;
  }
}

TEST(CsiProto, EnumValuesMatchThePublicSpecification) {
  using csi::v1::ControllerServiceCapability_RPC;
  using csi::v1::NodeServiceCapability_RPC;
  using csi::v1::VolumeCapability_AccessMode;
  EXPECT_EQ(VolumeCapability_AccessMode::SINGLE_NODE_MULTI_WRITER, 7);
  EXPECT_EQ(VolumeCapability_AccessMode::SINGLE_NODE_SINGLE_WRITER, 6);
  EXPECT_EQ(VolumeCapability_AccessMode::MULTI_NODE_MULTI_WRITER, 5);
  EXPECT_EQ(ControllerServiceCapability_RPC::LIST_VOLUMES_PUBLISHED_NODES, 10);
  EXPECT_EQ(ControllerServiceCapability_RPC::GET_VOLUME, 12);
  EXPECT_EQ(ControllerServiceCapability_RPC::SINGLE_NODE_MULTI_WRITER, 13);
  EXPECT_EQ(ControllerServiceCapability_RPC::MODIFY_VOLUME, 14);
  EXPECT_EQ(ControllerServiceCapability_RPC::GET_SNAPSHOT, 15);
  EXPECT_EQ(NodeServiceCapability_RPC::VOLUME_CONDITION, 4);
  EXPECT_EQ(NodeServiceCapability_RPC::SINGLE_NODE_MULTI_WRITER, 5);
  EXPECT_EQ(NodeServiceCapability_RPC::VOLUME_MOUNT_GROUP, 6);
  EXPECT_EQ(csi::v1::PluginCapability_Service::GROUP_CONTROLLER_SERVICE, 3);
}

TEST(CsiProto, EverySecretsFieldCarriesTheCsiSecretOption) {
  const auto* file = csi::v1::CreateVolumeRequest::descriptor()->file();
  int secrets_fields = 0;
  std::function<void(const Descriptor*)> visit = [&](const Descriptor* d) {
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      if (f->name() == "secrets") {
        ++secrets_fields;
        EXPECT_TRUE(f->options().GetExtension(csi::v1::csi_secret)) << d->full_name();
        EXPECT_EQ(f->options().GetExtension(csi::v1::csi_secret), true);
      }
    }
    for (int i = 0; i < d->nested_type_count(); ++i)
      visit(d->nested_type(i));
  };
  for (int i = 0; i < file->message_type_count(); ++i)
    visit(file->message_type(i));
  // Create/Delete/ControllerPublish/ControllerUnpublish/ValidateVolumeCapabilities/
  // ControllerModify/CreateSnapshot/DeleteSnapshot/ListSnapshots/GetSnapshot/ControllerExpand/
  // NodeStage/
  // NodePublish/NodeExpand/CreateVolumeGroupSnapshot/DeleteVolumeGroupSnapshot/
  // GetVolumeGroupSnapshot/GetMetadataAllocated/GetMetadataDelta.
  EXPECT_EQ(secrets_fields, 19);
}

// CSI v1.12 made ControllerModifyVolume generally available; GetSnapshot is new and not alpha.
TEST(CsiProto, ModifyVolumeAndGetSnapshotAreNotAlpha) {
  const auto* controller = DescriptorPool::generated_pool()->FindServiceByName("csi.v1.Controller");
  ASSERT_NE(controller, nullptr);
  for (const char* method : {"ControllerModifyVolume", "GetSnapshot"}) {
    const auto* m = controller->FindMethodByName(method);
    ASSERT_NE(m, nullptr) << method;
    EXPECT_FALSE(m->options().GetExtension(csi::v1::alpha_method)) << method;
  }
  for (const char* message : {"ControllerModifyVolumeRequest", "ControllerModifyVolumeResponse"}) {
    EXPECT_FALSE(Message(message)->options().GetExtension(csi::v1::alpha_message)) << message;
  }
  EXPECT_FALSE(Message("CreateVolumeRequest")
                   ->FindFieldByName("mutable_parameters")
                   ->options()
                   .GetExtension(csi::v1::alpha_field));
}

TEST(CsiProto, WireEncodingOfAKnownMessage) {
  // Bytes a CO compiled from the public file sends for
  // CreateVolumeRequest{name:"pv", capacity_range{required_bytes:1}}.
  const std::string wire("\x0a\x02pv\x12\x02\x08\x01", 8);
  csi::v1::CreateVolumeRequest request;
  ASSERT_TRUE(request.ParseFromString(wire));
  EXPECT_EQ(request.name(), "pv");
  EXPECT_EQ(request.capacity_range().required_bytes(), 1);
  std::string out;
  ASSERT_TRUE(request.SerializeToString(&out));
  EXPECT_EQ(out, wire);
}

}  // namespace
