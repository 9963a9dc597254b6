// oxide-csi-ctl's node verbs: info, capabilities, stage, unstage, publish, unpublish, stats.
// Single-threaded CLI.
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "csi.grpc.pb.h"

namespace oxide::cli {
namespace {

using csi::v1::VolumeCapability;

int Usage(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return kExitUsage;
}

// The two halves of a --publish-context / --volume-context KEY=VALUE (the parser checked the '=').
std::string Key(const std::string& pair) {
  return pair.substr(0, pair.find('='));
}
std::string Value(const std::string& pair) {
  return pair.substr(pair.find('=') + 1);
}

bool FillCapability(const ParsedArgs& flags, VolumeCapability* capability, std::string* error) {
  if (flags.Has("block")) {
    capability->mutable_block();
  } else {
    capability->mutable_mount()->set_fs_type(flags.Get("fs-type"));
    for (const std::string& flag : flags.All("mount-flag")) {
      capability->mutable_mount()->add_mount_flags(flag);
    }
  }
  std::string mode = flags.Get("access-mode");
  VolumeCapability::AccessMode::Mode parsed = VolumeCapability::AccessMode::SINGLE_NODE_WRITER;
  if (!mode.empty() && !VolumeCapability::AccessMode::Mode_Parse(mode, &parsed)) {
    *error = "--access-mode: \"" + mode + "\" is not a CSI access mode (e.g. SINGLE_NODE_WRITER)";
    return false;
  }
  capability->mutable_access_mode()->set_mode(parsed);
  return true;
}

// Prints "ok" (or {} in JSON) for the verbs whose answer is empty.
int Done(const CliContext& context, const grpc::Status& status,
         const google::protobuf::Message& response) {
  if (!status.ok()) return ReportRpcError(context, status);
  if (context.output == OutputFormat::kJson) {
    PrintJson(response);
  } else {
    std::cout << "ok\n";
  }
  return kExitOk;
}

int Info(const CliContext& context, const ParsedArgs&) {
  auto stub = csi::v1::Node::NewStub(context.channel);
  csi::v1::NodeGetInfoResponse response;
  grpc::Status status = stub->NodeGetInfo(context.NewCall().get(), {}, &response);
  if (!status.ok()) return ReportRpcError(context, status);
  if (context.output == OutputFormat::kJson) {
    PrintJson(response);
    return kExitOk;
  }
  std::string topology;
  for (const auto& [key, value] : response.accessible_topology().segments()) {
    topology += (topology.empty() ? "" : ", ") + key + "=" + value;
  }
  PrintFields({{"node_id", response.node_id()},
               {"max_volumes_per_node", std::to_string(response.max_volumes_per_node())},
               {"topology", topology}});
  return kExitOk;
}

int Capabilities(const CliContext& context, const ParsedArgs&) {
  auto stub = csi::v1::Node::NewStub(context.channel);
  csi::v1::NodeGetCapabilitiesResponse response;
  grpc::Status status = stub->NodeGetCapabilities(context.NewCall().get(), {}, &response);
  if (!status.ok()) return ReportRpcError(context, status);
  if (context.output == OutputFormat::kJson) {
    PrintJson(response);
    return kExitOk;
  }
  for (const auto& capability : response.capabilities()) {
    std::cout << "rpc: " << csi::v1::NodeServiceCapability::RPC::Type_Name(capability.rpc().type())
              << "\n";
  }
  return kExitOk;
}

// Fills the fields `Request` has from the verb's flags; false (with `error`) on a usage error.
template <typename Request>
bool FillRequest(const ParsedArgs& flags, Request* request, std::string* error) {
  request->set_volume_id(flags.Get("volume-id"));
  if constexpr (requires { request->set_staging_target_path(""); }) {
    request->set_staging_target_path(flags.Get("staging-path"));
  }
  if constexpr (requires { request->set_target_path(""); }) {
    request->set_target_path(flags.Get("target-path"));
  }
  if constexpr (requires { request->set_volume_path(""); }) {
    request->set_volume_path(flags.Get("volume-path").empty() ? flags.Get("target-path")
                                                              : flags.Get("volume-path"));
  }
  if constexpr (requires { request->set_readonly(true); }) {
    request->set_readonly(flags.Has("readonly"));
  }
  if constexpr (requires { request->mutable_publish_context(); }) {
    for (const std::string& pair : flags.All("publish-context")) {
      (*request->mutable_publish_context())[Key(pair)] = Value(pair);
    }
    for (const std::string& pair : flags.All("volume-context")) {
      (*request->mutable_volume_context())[Key(pair)] = Value(pair);
    }
  }
  if constexpr (requires { request->mutable_volume_capability(); }) {
    return FillCapability(flags, request->mutable_volume_capability(), error);
  }
  return true;
}

// A verb whose answer is empty: parse, fill, call, print "ok".
template <typename Request, typename Response>
int Call(const CliContext& context, const ParsedArgs& flags,
         grpc::Status (csi::v1::Node::Stub::*method)(grpc::ClientContext*, const Request&,
                                                     Response*)) {
  Request request;
  std::string error;
  if (!FillRequest(flags, &request, &error)) return Usage(error);
  Response response;
  auto stub = csi::v1::Node::NewStub(context.channel);
  return Done(context, (stub.get()->*method)(context.NewCall().get(), request, &response),
              response);
}

int Stage(const CliContext& context, const ParsedArgs& args) {
  return Call(context, args, &csi::v1::Node::Stub::NodeStageVolume);
}
int Unstage(const CliContext& context, const ParsedArgs& args) {
  return Call(context, args, &csi::v1::Node::Stub::NodeUnstageVolume);
}
int Publish(const CliContext& context, const ParsedArgs& args) {
  return Call(context, args, &csi::v1::Node::Stub::NodePublishVolume);
}
int Unpublish(const CliContext& context, const ParsedArgs& args) {
  return Call(context, args, &csi::v1::Node::Stub::NodeUnpublishVolume);
}

int Stats(const CliContext& context, const ParsedArgs& flags) {
  csi::v1::NodeGetVolumeStatsRequest request;
  std::string error;
  if (!FillRequest(flags, &request, &error)) return Usage(error);
  csi::v1::NodeGetVolumeStatsResponse response;
  auto stub = csi::v1::Node::NewStub(context.channel);
  grpc::Status status = stub->NodeGetVolumeStats(context.NewCall().get(), request, &response);
  if (!status.ok()) return ReportRpcError(context, status);
  if (context.output == OutputFormat::kJson) {
    PrintJson(response);
    return kExitOk;
  }
  for (const auto& usage : response.usage()) {
    std::cout << csi::v1::VolumeUsage::Unit_Name(usage.unit()) << ": total " << usage.total()
              << ", used " << usage.used() << ", available " << usage.available() << "\n";
  }
  if (response.has_volume_condition()) {
    std::cout << "condition: " << (response.volume_condition().abnormal() ? "abnormal" : "normal")
              << " (" << response.volume_condition().message() << ")\n";
  }
  return kExitOk;
}

VerbSpec NodeVerb(std::string verb, std::string help, std::vector<FlagSpec> flags) {
  return {
      .group = "node", .verb = std::move(verb), .help = std::move(help), .flags = std::move(flags)};
}

}  // namespace

std::vector<Command> NodeCommands() {
  const FlagSpec volume_id = RequiredFlag("volume-id", "ID", "The volume.", "volume_id");
  const FlagSpec staging_path = RequiredFlag(
      "staging-path", "PATH", "Where the volume is staged (a directory).", "staging_target_path");
  const FlagSpec target_path = RequiredFlag(
      "target-path", "PATH", "Where the volume is published for a pod.", "target_path");
  FlagSpec access_mode =
      StringFlag("access-mode", "MODE", "A CSI access mode (default SINGLE_NODE_WRITER).",
                 "volume_capability.access_mode");
  FlagSpec mount_flag = StringFlag("mount-flag", "F", "A mount option.", "mount_flags");
  mount_flag.repeated = true;
  FlagSpec block = BoolFlag("block", "A raw block device instead of a file system.");
  block.conflicts_with = {"fs-type", "mount-flag"};
  const std::vector<FlagSpec> capability = {
      StringFlag("fs-type", "FS", "The file system: ext4 or xfs.", "fs_type"),
      block,
      mount_flag,
      access_mode,
      KeyValueFlag("publish-context", "From controller publish (diskName=...).", "publish_context"),
      KeyValueFlag("volume-context", "From controller create.", "volume_context")};
  auto with_capability = [&](std::vector<FlagSpec> flags) {
    flags.insert(flags.end(), capability.begin(), capability.end());
    return flags;
  };
  const FlagSpec readonly = BoolFlag("readonly", "Publish read-only.", "readonly");
  FlagSpec volume_path =
      StringFlag("volume-path", "PATH", "The published or staged path to measure.", "volume_path");
  volume_path.required = true;
  return {
      {NodeVerb("info", "NodeGetInfo: node id, volume limit, topology.", {}), Info},
      {NodeVerb("capabilities", "NodeGetCapabilities: the Node calls the plugin serves.", {}),
       Capabilities},
      {NodeVerb("stage",
                "NodeStageVolume: find the attached disk, format it if blank, mount it "
                "at the staging path.",
                with_capability({volume_id, staging_path})),
       Stage},
      {NodeVerb("unstage", "NodeUnstageVolume: unmount the staging path.",
                {volume_id, staging_path}),
       Unstage},
      {NodeVerb("publish", "NodePublishVolume: bind-mount the staged volume at the target path.",
                with_capability({volume_id, staging_path, target_path, readonly})),
       Publish},
      {NodeVerb("unpublish", "NodeUnpublishVolume: unmount the target path.",
                {volume_id, target_path}),
       Unpublish},
      {NodeVerb("stats",
                "NodeGetVolumeStats: bytes and inodes used and free, and the volume's "
                "condition.",
                {volume_id, volume_path}),
       Stats},
  };
}

}  // namespace oxide::cli
