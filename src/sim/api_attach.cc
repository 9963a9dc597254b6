// POST /v1/instances/{instance}/disks/attach and /detach, with the decision order of
// README §9 (omicron datastore/disk.rs). --hotplug lifts the "not fully stopped" rules.
#include "api_handlers.h"
#include "clock.h"
#include "guest_devices.h"
#include "json_reader.h"
#include "model_errors.h"

namespace oxide_sim {
namespace {

constexpr size_t kMaxDisks = 12;

struct AttachCall {
  Instance* instance = nullptr;
  Disk* disk = nullptr;
};

ApiResult<AttachCall> Resolve(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, PathNameOrId(*call, "instance"));
  SIM_ASSIGN_OR_RETURN(const std::optional<NameOrId> project, QueryNameOrId(*call, "project"));
  SIM_ASSIGN_OR_RETURN(const nlohmann::json body, BodyJson(*call));
  SIM_ASSIGN_OR_RETURN(ObjectReader reader, BodyField(ObjectReader::Open(body, "DiskPath")));
  SIM_ASSIGN_OR_RETURN(const NameOrId disk_selector, BodyField(reader.Selector("disk")));
  SIM_RETURN_IF_ERROR(BodyCheck(reader.Finish()));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  Model& model = services.model;
  AttachCall out;
  out.instance = &model.select_instance(selector, project);
  if (disk_selector.is_id) {
    out.disk = model.disk(disk_selector.value);
    if (out.disk == nullptr) return object_not_found("disk", false, disk_selector.value);
    if (out.disk->project_id != out.instance->project_id) {
      return invalid_request("disk must be in the same project as the instance");
    }
  } else {
    out.disk = model.disk_named(out.instance->project_id, disk_selector.value);
    if (out.disk == nullptr) return object_not_found("disk", true, disk_selector.value);
  }
  return out;
}

void SaveAndAnswer(Services& services, const CallPtr& call, Disk& disk) {
  disk.time_modified = now_rfc3339();
  services.model.put(disk);
  services.guest.reconcile(services.model);
  call->RespondJson(202, to_api_json(disk));
}

ApiStatus instance_disk_attach(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(AttachCall target, Resolve(services, call));
  Instance& instance = *target.instance;
  Disk& disk = *target.disk;
  const bool hotplug = services.model.timing.hotplug;
  const bool mine = disk.instance_id == instance.id;
  if ((disk.state == "attached" || disk.state == "attaching") && mine) {
    call->RespondJson(202, to_api_json(disk));
    return ApiStatus::Ok();
  }
  if (disk.state == "creating" || disk.state == "detached") {
    const bool vmm = instance_has_vmm(instance.run_state);
    if (vmm && !hotplug)
      return invalid_request("cannot attach disk: instance is not fully stopped");
    if (vmm || instance.run_state == "creating" || instance.run_state == "stopped") {
      if (services.model.disks_attached_to(instance.id).size() >= kMaxDisks) {
        return invalid_request("cannot attach more than 12 disks to instance");
      }
      if (disk.disk_type == "local" && instance.run_state == "starting") {
        return conflict("cannot attach local storage disk: instance is starting");
      }
      disk.state = "attached";
      disk.instance_id = instance.id;
      SaveAndAnswer(services, call, disk);
      return ApiStatus::Ok();
    }
    return invalid_request("cannot attach disk to instance in " + instance.run_state + " state");
  }
  if (disk_state_has_instance(disk.state)) {
    return invalid_request("cannot attach disk \"" + disk.name +
                           "\": disk is attached to another instance");
  }
  return invalid_request("cannot attach disk \"" + disk.name + "\": invalid state " + disk.state);
}

ApiStatus instance_disk_detach(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(AttachCall target, Resolve(services, call));
  Instance& instance = *target.instance;
  Disk& disk = *target.disk;
  const bool hotplug = services.model.timing.hotplug;
  const bool mine = disk.instance_id == instance.id;
  if (disk.state == "detached") {
    call->RespondJson(202, to_api_json(disk));
    return ApiStatus::Ok();
  }
  if (disk.state == "attached" && mine) {
    const bool vmm = instance_has_vmm(instance.run_state);
    if (vmm && !hotplug)
      return invalid_request("cannot detach disk: instance is not fully stopped");
    if (instance.boot_disk_id == disk.id) return conflict("boot disk cannot be detached");
    const std::string& state = instance.run_state;
    if (!vmm && state != "creating" && state != "stopped" && state != "failed") {
      return invalid_request("cannot detach disk from instance in " + state + " state");
    }
    disk.state = "detached";
    disk.instance_id.clear();
    SaveAndAnswer(services, call, disk);
    return ApiStatus::Ok();
  }
  if (disk.state == "attaching" && mine) {
    return invalid_request("cannot detach disk \"" + disk.name +
                           "\": disk is currently being attached");
  }
  if (disk_state_has_instance(disk.state)) {
    return invalid_request("cannot detach disk \"" + disk.name +
                           "\": disk is attached to another instance");
  }
  return invalid_request("cannot detach disk \"" + disk.name + "\": invalid state " + disk.state);
}

}  // namespace

void RegisterAttachHandlers(std::map<std::string, ApiHandler>& table) {
  table["instance_disk_attach"] = &CatchModelErrors<&instance_disk_attach>;
  table["instance_disk_detach"] = &CatchModelErrors<&instance_disk_detach>;
}

}  // namespace oxide_sim
