// oxide-csi-ctl controller verbs: create, delete, publish, unpublish, list, get, validate,
// capacity and capabilities, each one CSI Controller call. Single-threaded CLI.
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/verb_args.h"
#include "csi.grpc.pb.h"

namespace oxide::cli {
namespace {

using csi::v1::Controller;
using csi::v1::VolumeCapability;

VolumeCapability Capability(const VerbArgs& args) {
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

int Create(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  if (args.positional.size() != 1) return Usage("controller create needs <name>");
  csi::v1::CreateVolumeRequest request;
  request.set_name(args.positional[0]);
  if (args.Has("size-gib")) {
    request.mutable_capacity_range()->set_required_bytes(std::stoll(args.Get("size-gib")) << 30);
  }
  if (args.Has("block-size")) (*request.mutable_parameters())["blockSize"] = args.Get("block-size");
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

int Delete(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  if (args.positional.size() != 1) return Usage("controller delete needs <volume-id>");
  csi::v1::DeleteVolumeRequest request;
  request.set_volume_id(args.positional[0]);
  csi::v1::DeleteVolumeResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->DeleteVolume(context.NewCall().get(), request, &response);
  return Print(context, status, response, [] { std::cout << "deleted\n"; });
}

int Publish(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  if (args.positional.size() != 2) return Usage("controller publish needs <volume-id> <node-id>");
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

int Unpublish(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  if (args.positional.empty() || args.positional.size() > 2) {
    return Usage("controller unpublish needs <volume-id> [<node-id>]");
  }
  csi::v1::ControllerUnpublishVolumeRequest request;
  request.set_volume_id(args.positional[0]);
  if (args.positional.size() == 2) request.set_node_id(args.positional[1]);
  csi::v1::ControllerUnpublishVolumeResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ControllerUnpublishVolume(context.NewCall().get(), request, &response);
  return Print(context, status, response, [] { std::cout << "unpublished\n"; });
}

void PrintVolumeLine(const csi::v1::Volume& volume, const std::string& nodes,
                     const std::string& condition) {
  std::cout << volume.volume_id() << "  " << (volume.capacity_bytes() >> 30) << " GiB  "
            << volume.volume_context().at("diskName") << "  nodes=[" << nodes << "]"
            << (condition.empty() ? "" : "  " + condition) << "\n";
}

int List(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  csi::v1::ListVolumesRequest request;
  if (args.Has("max")) request.set_max_entries(std::stoi(args.Get("max")));
  request.set_starting_token(args.Get("token"));
  csi::v1::ListVolumesResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ListVolumes(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] {
    for (const auto& entry : response.entries()) {
      std::string nodes;
      for (const auto& node : entry.status().published_node_ids())
        nodes += node;
      PrintVolumeLine(entry.volume(), nodes,
                      entry.status().volume_condition().abnormal()
                          ? "ABNORMAL: " + entry.status().volume_condition().message()
                          : "");
    }
    if (!response.next_token().empty())
      std::cout << "next_token: " << response.next_token() << "\n";
  });
}

int Get(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  if (args.positional.size() != 1) return Usage("controller get needs <volume-id>");
  csi::v1::ControllerGetVolumeRequest request;
  request.set_volume_id(args.positional[0]);
  csi::v1::ControllerGetVolumeResponse response;
  auto status = Controller::NewStub(context.channel)
                    ->ControllerGetVolume(context.NewCall().get(), request, &response);
  return Print(context, status, response, [&] {
    std::string nodes;
    for (const auto& node : response.status().published_node_ids())
      nodes += node;
    PrintVolumeLine(response.volume(), nodes, response.status().volume_condition().message());
  });
}

int Validate(const CliContext& context, const std::vector<std::string>& raw) {
  VerbArgs args = Parse(raw);
  if (args.positional.size() != 1) return Usage("controller validate needs <volume-id>");
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

int Capacity(const CliContext& context, const std::vector<std::string>&) {
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

int Capabilities(const CliContext& context, const std::vector<std::string>&) {
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

}  // namespace

std::vector<Command> ControllerCommands() {
  const std::string cap = " [--block | --fs-type=ext4|xfs] [--readonly]";
  return {
      {"controller", "create",
       "<name> [--size-gib=N] [--block-size=N] [--from-snapshot=ID | --from-volume=ID]" + cap,
       "CreateVolume: make (or find) the volume for this CSI name, blank, restored or cloned",
       Create},
      {"controller", "delete", "<volume-id>", "DeleteVolume", Delete},
      {"controller", "publish", "<volume-id> <node-id>" + cap,
       "ControllerPublishVolume: attach to the Oxide instance <node-id>", Publish},
      {"controller", "unpublish", "<volume-id> [<node-id>]",
       "ControllerUnpublishVolume: detach (from whichever instance without <node-id>)", Unpublish},
      {"controller", "list", "[--max=N] [--token=T]", "ListVolumes", List},
      {"controller", "get", "<volume-id>", "ControllerGetVolume", Get},
      {"controller", "validate", "<volume-id>" + cap, "ValidateVolumeCapabilities", Validate},
      {"controller", "capacity", "", "GetCapacity", Capacity},
      {"controller", "capabilities", "", "ControllerGetCapabilities", Capabilities},
  };
}

}  // namespace oxide::cli
