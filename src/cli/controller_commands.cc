// oxide-csi-ctl controller verbs: create, delete, publish, unpublish, list, get, validate,
// capacity and capabilities, each one CSI Controller call. Single-threaded CLI.
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/verb_output.h"
#include "csi.grpc.pb.h"
#include "csi/volume_request.h"

namespace oxide::cli {
namespace {

using csi::v1::Controller;
using csi::v1::VolumeCapability;

VolumeCapability Capability(const ParsedArgs& args) {
  VolumeCapability capability;
  if (args.Has("block")) {
    capability.mutable_block();
  } else {
    capability.mutable_mount()->set_fs_type(args.Get("fs-type", "ext4"));
  }
  capability.mutable_access_mode()->set_mode(
      args.Has("readonly") ? VolumeCapability::AccessMode::SINGLE_NODE_READER_ONLY
                           : VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return capability;
}

int Create(const CliContext& context, const ParsedArgs& args) {
  csi::v1::CreateVolumeRequest request;
  request.set_name(args.positional[0]);
  if (args.Has("size-gib")) {
    request.mutable_capacity_range()->set_required_bytes(
        static_cast<int64_t>(args.Number("size-gib") * csi_adapter::kGiB));
  }
  if (args.Has("block-size")) {
    (*request.mutable_parameters())[csi_adapter::kBlockSizeParameter] =
        std::to_string(args.Number("block-size"));
  }
  if (args.Has("disk-type")) {
    (*request.mutable_parameters())[csi_adapter::kDiskTypeParameter] = args.Get("disk-type");
  }
  if (args.Has("from-snapshot")) {
    request.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(
        args.Get("from-snapshot"));
  }
  if (args.Has("from-volume")) {
    request.mutable_volume_content_source()->mutable_volume()->set_volume_id(
        args.Get("from-volume"));
  }
  *request.add_volume_capabilities() = Capability(args);
  csi::v1::CreateVolumeResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->CreateVolume(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] {
    PrintFields({{"volume_id", response.volume().volume_id()},
                 {"capacity_bytes", std::to_string(response.volume().capacity_bytes())},
                 {"volume_context", JoinMap(response.volume().volume_context())}});
  });
}

int Delete(const CliContext& context, const ParsedArgs& args) {
  csi::v1::DeleteVolumeRequest request;
  request.set_volume_id(args.positional[0]);
  csi::v1::DeleteVolumeResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->DeleteVolume(context.NewCall().get(), request, &response);
  return Print(context, status, response, [] { std::cout << "deleted\n"; });
}

int Publish(const CliContext& context, const ParsedArgs& args) {
  csi::v1::ControllerPublishVolumeRequest request;
  request.set_volume_id(args.positional[0]);
  request.set_node_id(args.positional[1]);
  request.set_readonly(args.Has("readonly"));
  *request.mutable_volume_capability() = Capability(args);
  csi::v1::ControllerPublishVolumeResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ControllerPublishVolume(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] {
    PrintFields({{"publish_context", JoinMap(response.publish_context())}});
  });
}

int Unpublish(const CliContext& context, const ParsedArgs& args) {
  csi::v1::ControllerUnpublishVolumeRequest request;
  request.set_volume_id(args.positional[0]);
  if (args.positional.size() == 2) request.set_node_id(args.positional[1]);
  csi::v1::ControllerUnpublishVolumeResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ControllerUnpublishVolume(context.NewCall().get(), request, &response);
  return Print(context, status, response, [] { std::cout << "unpublished\n"; });
}

void PrintVolumeLine(const csi::v1::Volume& volume,
                     const google::protobuf::RepeatedPtrField<std::string>& node_ids,
                     const std::string& condition) {
  std::string nodes;
  for (const std::string& node : node_ids)
    nodes += (nodes.empty() ? "" : ", ") + node;
  std::cout << volume.volume_id() << "  " << (volume.capacity_bytes() >> 30) << " GiB  "
            << volume.volume_context().at("diskName") << "  nodes=[" << nodes << "]"
            << (condition.empty() ? "" : "  " + condition) << "\n";
}

int List(const CliContext& context, const ParsedArgs& args) {
  csi::v1::ListVolumesRequest request;
  if (args.Has("max")) request.set_max_entries(static_cast<int32_t>(args.Number("max")));
  request.set_starting_token(args.Get("token"));
  csi::v1::ListVolumesResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ListVolumes(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] {
    if (response.entries().empty()) std::cout << "(no volumes)\n";
    for (const auto& entry : response.entries()) {
      PrintVolumeLine(entry.volume(), entry.status().published_node_ids(),
                      entry.status().volume_condition().abnormal()
                          ? "ABNORMAL: " + entry.status().volume_condition().message()
                          : "");
    }
    if (!response.next_token().empty())
      std::cout << "next_token: " << response.next_token() << "\n";
  });
}

int Get(const CliContext& context, const ParsedArgs& args) {
  csi::v1::ControllerGetVolumeRequest request;
  request.set_volume_id(args.positional[0]);
  csi::v1::ControllerGetVolumeResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ControllerGetVolume(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] {
    PrintVolumeLine(response.volume(), response.status().published_node_ids(),
                    response.status().volume_condition().message());
  });
}

int Validate(const CliContext& context, const ParsedArgs& args) {
  csi::v1::ValidateVolumeCapabilitiesRequest request;
  request.set_volume_id(args.positional[0]);
  *request.add_volume_capabilities() = Capability(args);
  csi::v1::ValidateVolumeCapabilitiesResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ValidateVolumeCapabilities(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] {
    std::cout << (response.has_confirmed() ? "confirmed" : "not confirmed: " + response.message())
              << "\n";
  });
}

int Capacity(const CliContext& context, const ParsedArgs&) {
  csi::v1::GetCapacityRequest request;
  csi::v1::GetCapacityResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->GetCapacity(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] {
    PrintFields({{"available_capacity", std::to_string(response.available_capacity())},
                 {"maximum_volume_size", std::to_string(response.maximum_volume_size().value())},
                 {"minimum_volume_size", std::to_string(response.minimum_volume_size().value())}});
  });
}

int Capabilities(const CliContext& context, const ParsedArgs&) {
  csi::v1::ControllerGetCapabilitiesResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ControllerGetCapabilities(context.NewCall().get(), {}, &response);
  return Print(context, status, response, [&] {
    for (const auto& capability : response.capabilities()) {
      std::cout << "rpc: "
                << csi::v1::ControllerServiceCapability::RPC::Type_Name(capability.rpc().type())
                << "\n";
    }
  });
}

// The capability every volume verb sends (mount with a file system, or raw block).
std::vector<FlagSpec> CapabilityFlags() {
  FlagSpec block = BoolFlag("block", "A raw block device instead of a file system.");
  block.conflicts_with = {"fs-type"};
  return {block,
          StringFlag("fs-type", "FS", "The file system: ext4 (the default) or xfs.", "fs_type"),
          BoolFlag("readonly", "Read-only access (SINGLE_NODE_READER_ONLY).", "readonly")};
}

std::vector<FlagSpec> With(std::vector<FlagSpec> flags, const std::vector<FlagSpec>& more) {
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

const PositionalSpec kVolumeId{.name = "volume-id", .field = "volume_id"};

}  // namespace

std::vector<Command> ControllerCommands() {
  constexpr uint64_t kMaxDiskGiB = csi_adapter::kMaxDiskBytes / csi_adapter::kGiB;
  constexpr uint64_t kMaxEntries = 2147483647;  // max_entries is an int32
  const FlagSpec page_token = StringFlag(
      "token", "T", "Start at this page (the next_token of the previous page).", "starting_token");
  FlagSpec disk_type = StringFlag("disk-type", "TYPE",
                                  "distributed (the default; replicated) or local "
                                  "(sled-local NVMe: no snapshots or clones).",
                                  "diskType");
  disk_type.choices = {"distributed", "local"};
  FlagSpec from_snapshot =
      StringFlag("from-snapshot", "ID", "Restore this snapshot.", "snapshot_id");
  from_snapshot.conflicts_with = {"from-volume"};
  const FlagSpec max_entries = NumberFlag("max", "N", 1, kMaxEntries, "entries",
                                          "At most N entries per page.", "max_entries");
  return {
      {{.group = "controller",
        .verb = "create",
        .help = "CreateVolume: make (or find) the volume for this CSI name, blank, restored from "
                "a snapshot or cloned from a volume.",
        .positionals = {{.name = "name"}},
        .flags =
            With({NumberFlag("size-gib", "N", 1, kMaxDiskGiB, "GiB",
                             "The size; without it the plugin's default size.", "required_bytes"),
                  NumberFlag("block-size", "N", 512, 4096, "bytes",
                             "The disk's block size: 512, 2048 or 4096.", "blockSize"),
                  disk_type, from_snapshot,
                  StringFlag("from-volume", "ID", "Clone this volume.", "volume_id")},
                 CapabilityFlags())},
       Create},
      {{.group = "controller",
        .verb = "delete",
        .help = "DeleteVolume: delete the volume (refused while it is attached).",
        .positionals = {kVolumeId}},
       Delete},
      {{.group = "controller",
        .verb = "publish",
        .help = "ControllerPublishVolume: attach the volume to the Oxide instance <node-id>.",
        .positionals = {kVolumeId, {.name = "node-id", .field = "node_id"}},
        .flags = CapabilityFlags()},
       Publish},
      {{.group = "controller",
        .verb = "unpublish",
        .help = "ControllerUnpublishVolume: detach the volume (from whichever instance has it "
                "when <node-id> is not given).",
        .positionals = {kVolumeId, {.name = "node-id", .optional = true, .field = "node_id"}}},
       Unpublish},
      {{.group = "controller",
        .verb = "list",
        .help = "ListVolumes: every volume of the project, its size, disk and instances.",
        .flags = {max_entries, page_token}},
       List},
      {{.group = "controller",
        .verb = "get",
        .help = "ControllerGetVolume: one volume and its condition.",
        .positionals = {kVolumeId}},
       Get},
      {{.group = "controller",
        .verb = "validate",
        .help = "ValidateVolumeCapabilities: whether the volume can be used this way.",
        .positionals = {kVolumeId},
        .flags = CapabilityFlags()},
       Validate},
      {{.group = "controller",
        .verb = "capacity",
        .help = "GetCapacity: the space left in the project and the largest volume."},
       Capacity},
      {{.group = "controller",
        .verb = "capabilities",
        .help = "ControllerGetCapabilities: the Controller calls the plugin serves."},
       Capabilities},
  };
}

}  // namespace oxide::cli
