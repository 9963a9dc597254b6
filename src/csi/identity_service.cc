#include "csi/identity_service.h"

#include "csi/handler_install.h"
#include "version.h"

namespace oxide::csi_adapter {

using csi::v1::PluginCapability;

IdentityService::IdentityService(const Settings& settings, std::vector<HealthCheck> health_checks)
    : health_checks_(std::move(health_checks)) {
  info_.set_name(settings.driver_name);
  info_.set_vendor_version(kVersion);
  (*info_.mutable_manifest())["mode"] = ModeName(settings.mode);
  (*info_.mutable_manifest())["oxide-api-version"] = kOxideApiVersion;

  auto add_service = [this](PluginCapability::Service::Type type) {
    capabilities_.add_capabilities()->mutable_service()->set_type(type);
  };
  if (settings.ServesController()) add_service(PluginCapability::Service::CONTROLLER_SERVICE);
  add_service(PluginCapability::Service::VOLUME_ACCESSIBILITY_CONSTRAINTS);
}

void IdentityService::GetPluginInfo(const rpc::CallInfo&, const csi::v1::GetPluginInfoRequest&,
                                    rpc::Reply<csi::v1::GetPluginInfoResponse> reply) {
  reply.Ok(info_);
}

void IdentityService::GetPluginCapabilities(
    const rpc::CallInfo&, const csi::v1::GetPluginCapabilitiesRequest&,
    rpc::Reply<csi::v1::GetPluginCapabilitiesResponse> reply) {
  reply.Ok(capabilities_);
}

void IdentityService::Probe(const rpc::CallInfo&, const csi::v1::ProbeRequest&,
                            rpc::Reply<csi::v1::ProbeResponse> reply) {
  for (const HealthCheck& check : health_checks_) {
    Status health = check();
    if (!health.ok()) {
      reply.Fail(FailedPrecondition("not ready: " + health.message()));
      return;
    }
  }
  csi::v1::ProbeResponse response;
  response.mutable_ready()->set_value(true);
  reply.Ok(std::move(response));
}

void IdentityService::Register(rpc::CsiHandlers& handlers) {
  OXIDE_CSI_INSTALL_HANDLER(handlers, IdentityService, GetPluginInfo);
  OXIDE_CSI_INSTALL_HANDLER(handlers, IdentityService, GetPluginCapabilities);
  OXIDE_CSI_INSTALL_HANDLER(handlers, IdentityService, Probe);
}

}  // namespace oxide::csi_adapter
