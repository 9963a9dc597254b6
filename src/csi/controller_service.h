// The CSI Controller service: validates each request, hands volume changes to the VolumeEngine
// and snapshot changes to the SnapshotEngine, and answers the read-only RPCs (list, get,
// validate, capacity) straight from Oxide, the source of truth. Volume content sources and the
// snapshot RPCs are in controller_volume_sources.cc and controller_snapshots.cc. Loop thread only.
#pragma once

#include <string>

#include "backend/oxide_client.h"
#include "config/settings.h"
#include "csi/node_instances.h"
#include "engine/snapshot_engine.h"
#include "engine/volume_engine.h"
#include "loop/loop_affinity.h"
#include "rpc/csi_rpcs.h"

namespace oxide::csi_adapter {

class ControllerService {
 public:
  ControllerService(const Settings& settings, backend::OxideClient* oxide,
                    engine::VolumeEngine* engine, engine::SnapshotEngine* snapshots);

#define OXIDE_DECLARE_CONTROLLER_METHOD(service, name)                        \
  void name(const rpc::CallInfo& info, const csi::v1::name##Request& request, \
            rpc::Reply<csi::v1::name##Response> reply);
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, CreateVolume)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, DeleteVolume)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, ControllerPublishVolume)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, ControllerUnpublishVolume)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, ValidateVolumeCapabilities)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, ListVolumes)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, GetCapacity)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, ControllerGetCapabilities)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, ControllerGetVolume)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, CreateSnapshot)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, DeleteSnapshot)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, ListSnapshots)
  OXIDE_DECLARE_CONTROLLER_METHOD(Controller, GetSnapshot)
#undef OXIDE_DECLARE_CONTROLLER_METHOD

  // Installs the handlers above; the expand and modify RPCs stay UNIMPLEMENTED.
  void Register(rpc::CsiHandlers& handlers);

 private:
  using SharedCreateReply = std::shared_ptr<rpc::Reply<csi::v1::CreateVolumeResponse>>;

  void FillVolume(const backend::Disk& disk, csi::v1::Volume* volume) const;
  // Answers a CreateVolume with the volume (and the content source it was made from), its
  // volume_context holding `context` (the filesystem options, encrypted) besides the disk's name.
  engine::OperationWaiter VolumeAnswer(SharedCreateReply reply,
                                       std::optional<csi::v1::VolumeContentSource> source,
                                       std::map<std::string, std::string> context);
  // Restore (snapshot source) or clone (volume source): checks the source, then creates.
  void CreateFromSource(engine::CreateSpec spec, const csi::v1::VolumeContentSource& source,
                        const std::string& fingerprint, SharedCreateReply reply,
                        std::map<std::string, std::string> context);
  // The source is gone: a volume already made from it still answers a retry; else `error`.
  void AnswerExisting(const engine::CreateSpec& spec, const Status& error,
                      engine::OperationWaiter answer);

  std::string zone_;
  uint64_t default_size_;
  bool advertise_get_snapshot_;
  backend::OxideClient* oxide_;
  engine::VolumeEngine* engine_;
  engine::SnapshotEngine* snapshots_;
  NodeInstances node_instances_;  // "name:" node ids <-> instance ids
  LoopAffinity affinity_;         // handlers run on the loop thread
};

}  // namespace oxide::csi_adapter
