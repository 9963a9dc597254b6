// oxide-csi-ctl identity verbs: info, capabilities and probe, each one CSI Identity call.
// Single-threaded CLI.
#include <iostream>

#include "cli/commands.h"
#include "csi.grpc.pb.h"

namespace oxide::cli {
namespace {

int Info(const CliContext& context, const ParsedArgs&) {
  auto stub = csi::v1::Identity::NewStub(context.channel);
  csi::v1::GetPluginInfoResponse response;
  grpc::Status status = stub->GetPluginInfo(context.NewCall().get(), {}, &response);
  if (!status.ok()) return ReportRpcError(context, status);
  if (context.output == OutputFormat::kJson) {
    PrintJson(response);
    return kExitOk;
  }
  std::string manifest;
  for (const auto& [key, value] : response.manifest()) {
    manifest += (manifest.empty() ? "" : ", ") + key + "=" + value;
  }
  PrintFields({{"name", response.name()},
               {"vendor_version", response.vendor_version()},
               {"manifest", manifest}});
  return kExitOk;
}

int Capabilities(const CliContext& context, const ParsedArgs&) {
  auto stub = csi::v1::Identity::NewStub(context.channel);
  csi::v1::GetPluginCapabilitiesResponse response;
  grpc::Status status = stub->GetPluginCapabilities(context.NewCall().get(), {}, &response);
  if (!status.ok()) return ReportRpcError(context, status);
  if (context.output == OutputFormat::kJson) {
    PrintJson(response);
    return kExitOk;
  }
  for (const auto& capability : response.capabilities()) {
    if (capability.has_service()) {
      std::cout << "service: "
                << csi::v1::PluginCapability::Service::Type_Name(capability.service().type())
                << "\n";
    } else if (capability.has_volume_expansion()) {
      std::cout << "volume_expansion: "
                << csi::v1::PluginCapability::VolumeExpansion::Type_Name(
                       capability.volume_expansion().type())
                << "\n";
    }
  }
  return kExitOk;
}

int Probe(const CliContext& context, const ParsedArgs&) {
  auto stub = csi::v1::Identity::NewStub(context.channel);
  csi::v1::ProbeResponse response;
  grpc::Status status = stub->Probe(context.NewCall().get(), {}, &response);
  if (!status.ok()) return ReportRpcError(context, status);
  if (context.output == OutputFormat::kJson) {
    PrintJson(response);
    return kExitOk;
  }
  // An unset `ready` means ready (CSI spec).
  bool ready = !response.has_ready() || response.ready().value();
  std::cout << "ready: " << (ready ? "true" : "false") << "\n";
  return ready ? kExitOk : kExitRpcError;
}

}  // namespace

std::vector<Command> IdentityCommands() {
  return {
      {{.group = "identity",
        .verb = "info",
        .help = "GetPluginInfo: driver name, version, manifest."},
       Info},
      {{.group = "identity",
        .verb = "capabilities",
        .help = "GetPluginCapabilities: the services and features the plugin offers."},
       Capabilities},
      {{.group = "identity", .verb = "probe", .help = "Probe: exit 0 when the plugin is ready."},
       Probe},
  };
}

}  // namespace oxide::cli
