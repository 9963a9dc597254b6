// The unary RPCs of the three CSI services the plugin registers, and the table of handlers the
// engine fills in. X-macros keep the list in one place: every RPC `Name` has the messages
// csi::v1::NameRequest and csi::v1::NameResponse.
#pragma once

#include "csi.grpc.pb.h"
#include "rpc/unary_call.h"

#define OXIDE_CSI_IDENTITY_RPCS(X)   \
  X(Identity, GetPluginInfo)         \
  X(Identity, GetPluginCapabilities) \
  X(Identity, Probe)

#define OXIDE_CSI_CONTROLLER_RPCS(X)        \
  X(Controller, CreateVolume)               \
  X(Controller, DeleteVolume)               \
  X(Controller, ControllerPublishVolume)    \
  X(Controller, ControllerUnpublishVolume)  \
  X(Controller, ValidateVolumeCapabilities) \
  X(Controller, ListVolumes)                \
  X(Controller, GetCapacity)                \
  X(Controller, ControllerGetCapabilities)  \
  X(Controller, CreateSnapshot)             \
  X(Controller, DeleteSnapshot)             \
  X(Controller, ListSnapshots)              \
  X(Controller, ControllerExpandVolume)     \
  X(Controller, ControllerGetVolume)        \
  X(Controller, ControllerModifyVolume)     \
  X(Controller, GetSnapshot)

#define OXIDE_CSI_NODE_RPCS(X) \
  X(Node, NodeStageVolume)     \
  X(Node, NodeUnstageVolume)   \
  X(Node, NodePublishVolume)   \
  X(Node, NodeUnpublishVolume) \
  X(Node, NodeGetVolumeStats)  \
  X(Node, NodeExpandVolume)    \
  X(Node, NodeGetCapabilities) \
  X(Node, NodeGetInfo)

#define OXIDE_CSI_ALL_RPCS(X)  \
  OXIDE_CSI_IDENTITY_RPCS(X)   \
  OXIDE_CSI_CONTROLLER_RPCS(X) \
  OXIDE_CSI_NODE_RPCS(X)

namespace oxide::rpc {

// One handler per RPC; an empty one answers UNIMPLEMENTED. Filled once before the server starts.
struct CsiHandlers {
#define OXIDE_DECLARE_HANDLER(service, name) \
  Handler<csi::v1::name##Request, csi::v1::name##Response> name;
  OXIDE_CSI_ALL_RPCS(OXIDE_DECLARE_HANDLER)
#undef OXIDE_DECLARE_HANDLER
};

}  // namespace oxide::rpc
