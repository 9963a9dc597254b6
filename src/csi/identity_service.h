// The CSI Identity service: who the plugin is, what it offers, and whether it is ready.
// Loop thread only. Readiness is the conjunction of health checks of the plugin itself (the state
// database and its commits); the Oxide API's health is not one of them (docs/probe.md).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/settings.h"
#include "loop/loop_affinity.h"
#include "rpc/csi_rpcs.h"
#include "util/status.h"

namespace oxide::csi_adapter {

class IdentityService {
 public:
  using HealthCheck = std::function<Status()>;

  IdentityService(const Settings& settings, std::vector<HealthCheck> health_checks);

  void GetPluginInfo(const rpc::CallInfo&, const csi::v1::GetPluginInfoRequest&,
                     rpc::Reply<csi::v1::GetPluginInfoResponse> reply);
  void GetPluginCapabilities(const rpc::CallInfo&, const csi::v1::GetPluginCapabilitiesRequest&,
                             rpc::Reply<csi::v1::GetPluginCapabilitiesResponse> reply);
  void Probe(const rpc::CallInfo&, const csi::v1::ProbeRequest&,
             rpc::Reply<csi::v1::ProbeResponse> reply);

  // Installs the three handlers into `handlers`.
  void Register(rpc::CsiHandlers& handlers);

 private:
  csi::v1::GetPluginInfoResponse info_;
  csi::v1::GetPluginCapabilitiesResponse capabilities_;
  std::vector<HealthCheck> health_checks_;
  LoopAffinity affinity_;  // handlers run on the loop thread
};

}  // namespace oxide::csi_adapter
