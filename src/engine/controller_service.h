// The CSI Controller service: validates each request, hands volume changes to the VolumeEngine
// and answers the read-only RPCs (list, get, validate, capacity) straight from Oxide, the source
// of truth. Loop thread only.
#pragma once

#include <string>

#include "backend/oxide_client.h"
#include "config/settings.h"
#include "engine/volume_engine.h"
#include "rpc/csi_rpcs.h"

namespace oxide::engine {

class ControllerService {
 public:
  ControllerService(const Settings& settings, backend::OxideClient* oxide, VolumeEngine* engine);

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
#undef OXIDE_DECLARE_CONTROLLER_METHOD

  // Installs the handlers above; the snapshot, expand and modify RPCs stay UNIMPLEMENTED.
  void Register(rpc::CsiHandlers& handlers);

 private:
  void FillVolume(const backend::Disk& disk, csi::v1::Volume* volume) const;
  void ListPage(std::shared_ptr<rpc::Reply<csi::v1::ListVolumesResponse>> reply,
                std::shared_ptr<csi::v1::ListVolumesResponse> response, uint32_t wanted,
                std::string page_token);

  std::string zone_;
  uint64_t default_size_;
  backend::OxideClient* oxide_;
  VolumeEngine* engine_;
};

}  // namespace oxide::engine
