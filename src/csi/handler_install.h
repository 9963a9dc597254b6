// Installs a CSI service's handler methods in the server's handler table (rpc::CsiHandlers), the
// same way for every service: each installed handler first checks that it runs on the loop thread
// (loop/loop_affinity.h), under the name "Service::Method", then calls the method. The services'
// Register() installs them once, before the server starts, on the thread that builds the
// services; the handlers themselves run on the loop thread.
#pragma once

#include <utility>

#include "loop/loop_affinity.h"
#include "rpc/csi_rpcs.h"

namespace oxide::csi_adapter {

// `slot` gets a handler that checks `affinity` under `name`, then calls `method` of `service`.
// `service`, `affinity` and `name` outlive the handler.
template <typename Service, typename Request, typename Response>
void InstallHandler(rpc::Handler<Request, Response>& slot, Service* service,
                    void (Service::*method)(const rpc::CallInfo&, const Request&,
                                            rpc::Reply<Response>),
                    const LoopAffinity& affinity, const char* name) {
  slot = [service, method, &affinity, name](const rpc::CallInfo& info, const Request& request,
                                            rpc::Reply<Response> reply) {
    affinity.Check(name);
    (service->*method)(info, request, std::move(reply));
  };
}

}  // namespace oxide::csi_adapter

// InstallHandler with the name spelled from the method's, so that it cannot drift from it: in a
// member function of `Service` that has a LoopAffinity member `affinity_`,
//   OXIDE_CSI_INSTALL_HANDLER(handlers, NodeService, NodeGetInfo);
// installs handlers.NodeGetInfo = this->NodeGetInfo, checked as "NodeService::NodeGetInfo".
#define OXIDE_CSI_INSTALL_HANDLER(handlers, Service, method)                                 \
  ::oxide::csi_adapter::InstallHandler((handlers).method, this, &Service::method, affinity_, \
                                       #Service "::" #method)
