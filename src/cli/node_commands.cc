// oxide-csi-ctl's node verbs: info, capabilities, stage, unstage, publish, unpublish, stats.
// Single-threaded CLI.
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "csi.grpc.pb.h"

namespace oxide::cli {
namespace {

using csi::v1::VolumeCapability;

// The flags of the node verbs: --name value or --name=value; switches take no value.
struct NodeFlags {
  std::map<std::string, std::string> values;
  std::vector<std::pair<std::string, std::string>> publish_context;
  std::vector<std::pair<std::string, std::string>> volume_context;
  std::vector<std::string> mount_flags;
  bool block = false;
  bool readonly = false;
  std::string error;

  std::string Get(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? "" : it->second;
  }
};

NodeFlags ParseFlags(const std::vector<std::string>& args) {
  NodeFlags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    if (name.rfind("--", 0) != 0) {
      flags.error = "unexpected argument " + name;
      return flags;
    }
    name = name.substr(2);
    std::string value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "block" || name == "readonly") {
      (name == "block" ? flags.block : flags.readonly) = true;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        flags.error = "--" + name + " needs a value";
        return flags;
      }
      value = args[++i];
    }
    if (name == "publish-context" || name == "volume-context") {
      auto eq = value.find('=');
      if (eq == std::string::npos) {
        flags.error = "--" + name + " takes key=value";
        return flags;
      }
      (name == "publish-context" ? flags.publish_context : flags.volume_context)
          .emplace_back(value.substr(0, eq), value.substr(eq + 1));
    } else if (name == "mount-flag") {
      flags.mount_flags.push_back(value);
    } else if (name == "volume-id" || name == "staging-path" || name == "target-path" ||
               name == "fs-type" || name == "access-mode" || name == "volume-path") {
      flags.values[name] = value;
    } else {
      flags.error = "unknown flag --" + name;
      return flags;
    }
  }
  return flags;
}

int Usage(const std::string& message) {
  std::cerr << "oxide-csi-ctl: " << message << " (see --help)\n";
  return kExitUsage;
}

bool FillCapability(const NodeFlags& flags, VolumeCapability* capability, std::string* error) {
  if (flags.block) {
    capability->mutable_block();
  } else {
    capability->mutable_mount()->set_fs_type(flags.Get("fs-type"));
    for (const std::string& flag : flags.mount_flags) {
      capability->mutable_mount()->add_mount_flags(flag);
    }
  }
  std::string mode = flags.Get("access-mode");
  VolumeCapability::AccessMode::Mode parsed = VolumeCapability::AccessMode::SINGLE_NODE_WRITER;
  if (!mode.empty() && !VolumeCapability::AccessMode::Mode_Parse(mode, &parsed)) {
    *error = "--access-mode " + mode + " is not a CSI access mode (e.g. SINGLE_NODE_WRITER)";
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

int Info(const CliContext& context, const std::vector<std::string>&) {
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

int Capabilities(const CliContext& context, const std::vector<std::string>&) {
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
bool FillRequest(const NodeFlags& flags, Request* request, std::string* error) {
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
  if constexpr (requires { request->set_readonly(true); }) request->set_readonly(flags.readonly);
  if constexpr (requires { request->mutable_publish_context(); }) {
    for (const auto& [key, value] : flags.publish_context) {
      (*request->mutable_publish_context())[key] = value;
    }
    for (const auto& [key, value] : flags.volume_context) {
      (*request->mutable_volume_context())[key] = value;
    }
  }
  if constexpr (requires { request->mutable_volume_capability(); }) {
    return FillCapability(flags, request->mutable_volume_capability(), error);
  }
  return true;
}

// A verb whose answer is empty: parse, fill, call, print "ok".
template <typename Request, typename Response>
int Call(const CliContext& context, const std::vector<std::string>& args,
         grpc::Status (csi::v1::Node::Stub::*method)(grpc::ClientContext*, const Request&,
                                                     Response*)) {
  NodeFlags flags = ParseFlags(args);
  if (!flags.error.empty()) return Usage(flags.error);
  Request request;
  std::string error;
  if (!FillRequest(flags, &request, &error)) return Usage(error);
  Response response;
  auto stub = csi::v1::Node::NewStub(context.channel);
  return Done(context, (stub.get()->*method)(context.NewCall().get(), request, &response),
              response);
}

int Stage(const CliContext& context, const std::vector<std::string>& args) {
  return Call(context, args, &csi::v1::Node::Stub::NodeStageVolume);
}
int Unstage(const CliContext& context, const std::vector<std::string>& args) {
  return Call(context, args, &csi::v1::Node::Stub::NodeUnstageVolume);
}
int Publish(const CliContext& context, const std::vector<std::string>& args) {
  return Call(context, args, &csi::v1::Node::Stub::NodePublishVolume);
}
int Unpublish(const CliContext& context, const std::vector<std::string>& args) {
  return Call(context, args, &csi::v1::Node::Stub::NodeUnpublishVolume);
}

int Stats(const CliContext& context, const std::vector<std::string>& args) {
  NodeFlags flags = ParseFlags(args);
  if (!flags.error.empty()) return Usage(flags.error);
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

}  // namespace

std::vector<Command> NodeCommands() {
  const std::string capability =
      " [--fs-type ext4|xfs | --block] [--mount-flag F]... [--access-mode MODE]"
      " [--publish-context k=v]... [--volume-context k=v]...";
  return {
      {"node", "info", "", "NodeGetInfo: node id, volume limit, topology", Info},
      {"node", "capabilities", "", "NodeGetCapabilities", Capabilities},
      {"node", "stage", "--volume-id ID --staging-path P" + capability, "NodeStageVolume", Stage},
      {"node", "unstage", "--volume-id ID --staging-path P", "NodeUnstageVolume", Unstage},
      {"node", "publish",
       "--volume-id ID --staging-path P --target-path T [--readonly]" + capability,
       "NodePublishVolume", Publish},
      {"node", "unpublish", "--volume-id ID --target-path T", "NodeUnpublishVolume", Unpublish},
      {"node", "stats", "--volume-id ID --volume-path P", "NodeGetVolumeStats", Stats},
  };
}

}  // namespace oxide::cli
