// POST /v1/instances/{instance}/disks/attach and /detach, with the decision order of
// README §9 (omicron datastore/disk.rs). --hotplug lifts the "not fully stopped" rules.
#include "api_handlers.h"
#include "clock.h"
#include "guest_devices.h"
#include "json_reader.h"

namespace oxide_sim {
namespace {

constexpr size_t kMaxDisks = 12;

struct AttachCall {
  Instance* instance = nullptr;
  Disk* disk = nullptr;
};

AttachCall resolve(Services& services, const CallPtr& call) {
  const NameOrId selector = path_name_or_id(*call, "instance");
  const auto project = query_name_or_id(*call, "project");
  const nlohmann::json body = body_json(*call);
  NameOrId disk_selector;
  try {
    ObjectReader reader(body, "DiskPath");
    disk_selector = reader.name_or_id("disk");
    reader.finish();
  } catch (const BodyError& problem) {
    throw bad_json_body(problem.what());
  }
  authenticate(services, *call);
  Model& model = services.model;
  AttachCall out;
  out.instance = &model.select_instance(selector, project);
  if (disk_selector.is_id) {
    out.disk = model.disk(disk_selector.value);
    if (out.disk == nullptr) throw object_not_found("disk", false, disk_selector.value);
    if (out.disk->project_id != out.instance->project_id) {
      throw invalid_request("disk must be in the same project as the instance");
    }
  } else {
    out.disk = model.disk_named(out.instance->project_id, disk_selector.value);
    if (out.disk == nullptr) throw object_not_found("disk", true, disk_selector.value);
  }
  return out;
}

void save_and_answer(Services& services, const CallPtr& call, Disk& disk) {
  disk.time_modified = now_rfc3339();
  services.model.put(disk);
  services.guest.reconcile(services.model);
  call->respond_json(202, to_api_json(disk));
}

void instance_disk_attach(Services& services, const CallPtr& call) {
  AttachCall target = resolve(services, call);
  Instance& instance = *target.instance;
  Disk& disk = *target.disk;
  const bool hotplug = services.model.timing.hotplug;
  const bool mine = disk.instance_id == instance.id;
  if ((disk.state == "attached" || disk.state == "attaching") && mine) {
    call->respond_json(202, to_api_json(disk));
    return;
  }
  if (disk.state == "creating" || disk.state == "detached") {
    const bool vmm = instance_has_vmm(instance.run_state);
    if (vmm && !hotplug) throw invalid_request("cannot attach disk: instance is not fully stopped");
    if (vmm || instance.run_state == "creating" || instance.run_state == "stopped") {
      if (services.model.disks_attached_to(instance.id).size() >= kMaxDisks) {
        throw invalid_request("cannot attach more than 12 disks to instance");
      }
      if (disk.disk_type == "local" && instance.run_state == "starting") {
        throw conflict("cannot attach local storage disk: instance is starting");
      }
      disk.state = "attached";
      disk.instance_id = instance.id;
      save_and_answer(services, call, disk);
      return;
    }
    throw invalid_request("cannot attach disk to instance in " + instance.run_state + " state");
  }
  if (disk_state_has_instance(disk.state)) {
    throw invalid_request("cannot attach disk \"" + disk.name +
                          "\": disk is attached to another instance");
  }
  throw invalid_request("cannot attach disk \"" + disk.name + "\": invalid state " + disk.state);
}

void instance_disk_detach(Services& services, const CallPtr& call) {
  AttachCall target = resolve(services, call);
  Instance& instance = *target.instance;
  Disk& disk = *target.disk;
  const bool hotplug = services.model.timing.hotplug;
  const bool mine = disk.instance_id == instance.id;
  if (disk.state == "detached") {
    call->respond_json(202, to_api_json(disk));
    return;
  }
  if (disk.state == "attached" && mine) {
    const bool vmm = instance_has_vmm(instance.run_state);
    if (vmm && !hotplug) throw invalid_request("cannot detach disk: instance is not fully stopped");
    if (instance.boot_disk_id == disk.id) throw conflict("boot disk cannot be detached");
    const std::string& state = instance.run_state;
    if (!vmm && state != "creating" && state != "stopped" && state != "failed") {
      throw invalid_request("cannot detach disk from instance in " + state + " state");
    }
    disk.state = "detached";
    disk.instance_id.clear();
    save_and_answer(services, call, disk);
    return;
  }
  if (disk.state == "attaching" && mine) {
    throw invalid_request("cannot detach disk \"" + disk.name +
                          "\": disk is currently being attached");
  }
  if (disk_state_has_instance(disk.state)) {
    throw invalid_request("cannot detach disk \"" + disk.name +
                          "\": disk is attached to another instance");
  }
  throw invalid_request("cannot detach disk \"" + disk.name + "\": invalid state " + disk.state);
}

}  // namespace

void register_attach_handlers(std::map<std::string, ApiHandler>& table) {
  table["instance_disk_attach"] = &instance_disk_attach;
  table["instance_disk_detach"] = &instance_disk_detach;
}

}  // namespace oxide_sim
