// /v1/instances/{instance} view/update/delete/start/stop, its disk list, and the list
// (README §9). Instance create lives in api_instance_create.cc.
#include "api_handlers.h"
#include "clock.h"
#include "instance_lifecycle.h"
#include "json_reader.h"
#include "model_errors.h"
#include "pagination.h"

namespace oxide_sim {

ApiStatus instance_create(Services& services, const CallPtr& call);  // api_instance_create.cc

namespace {

ApiResult<Instance*> SelectedInstance(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, PathNameOrId(*call, "instance"));
  SIM_ASSIGN_OR_RETURN(const std::optional<NameOrId> project, QueryNameOrId(*call, "project"));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  return &services.model.select_instance(selector, project);
}

ApiStatus instance_list(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(PageRequest page, ParsePageRequest(*call, true));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  const Project& project = services.model.select_project(*page.project);
  std::vector<PageEntry> entries;
  for (const auto& [id, instance] : services.model.instances) {
    if (instance.project_id == project.id) {
      entries.push_back({instance.name, instance.id, to_api_json(instance)});
    }
  }
  call->RespondJson(200, BuildPage(std::move(entries), page));
  return ApiStatus::Ok();
}

ApiStatus instance_view(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const Instance* instance, SelectedInstance(services, call));
  call->RespondJson(200, to_api_json(*instance));
  return ApiStatus::Ok();
}

// The InstanceUpdate body. auto_restart_policy, boot_disk and cpu_platform must be present
// (null allowed), as with Nexus.
struct UpdateParams {
  uint64_t ncpus = 0, memory = 0;
  std::optional<NameOrId> boot_disk;
  std::optional<std::string> restart_policy, cpu_platform;
  bool jumbo = false;
};

ApiResult<UpdateParams> ReadInstanceUpdate(const nlohmann::json& body) {
  UpdateParams params;
  SIM_ASSIGN_OR_RETURN(ObjectReader reader, BodyField(ObjectReader::Open(body, "InstanceUpdate")));
  for (const char* key : {"auto_restart_policy", "boot_disk", "cpu_platform"}) {
    if (reader.Raw(key) == nullptr)
      return bad_json_body(std::string("missing field `") + key + "`");
  }
  SIM_ASSIGN_OR_RETURN(params.ncpus, BodyField(reader.U64("ncpus", "u16")));
  SIM_ASSIGN_OR_RETURN(params.memory, BodyField(reader.U64("memory")));
  SIM_ASSIGN_OR_RETURN(params.boot_disk, BodyField(reader.OptionalSelector("boot_disk")));
  if (reader.Has("auto_restart_policy")) {
    SIM_ASSIGN_OR_RETURN(
        params.restart_policy,
        BodyField(CheckVariant(*reader.Raw("auto_restart_policy"), {"never", "best_effort"})));
  }
  if (reader.Has("cpu_platform")) {
    SIM_ASSIGN_OR_RETURN(params.cpu_platform,
                         BodyField(CheckVariant(*reader.Raw("cpu_platform"),
                                                {"amd_milan", "amd_turin", "amd_turin_v2"})));
  }
  SIM_ASSIGN_OR_RETURN(params.jumbo, BodyField(reader.Boolean("enable_jumbo_frames")));
  reader.Raw("multicast_groups");
  SIM_RETURN_IF_ERROR(BodyCheck(reader.Finish()));
  return params;
}

// The boot disk the update names (nullopt for none), checked: a change needs a stopped instance
// and a disk attached to it.
ApiResult<std::optional<std::string>> CheckBootDisk(Model& model, const Instance& instance,
                                                    const std::optional<NameOrId>& boot_disk,
                                                    bool has_vmm) {
  if (!boot_disk) {
    if (instance.boot_disk_id && has_vmm) {
      return invalid_request("instance must be stopped to set boot disk");
    }
    return std::optional<std::string>();
  }
  const Disk& disk = boot_disk->is_id
                         ? model.select_disk(*boot_disk, std::nullopt)
                         : model.select_disk(*boot_disk, NameOrId{true, instance.project_id});
  if (disk.id != instance.boot_disk_id) {
    if (has_vmm) return invalid_request("instance must be stopped to set boot disk");
    if (disk.state != "attached" || disk.instance_id != instance.id) {
      return invalid_request("boot disk must be attached to the instance");
    }
  }
  return std::optional<std::string>(disk.id);
}

ApiStatus instance_update(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, PathNameOrId(*call, "instance"));
  SIM_ASSIGN_OR_RETURN(const std::optional<NameOrId> project, QueryNameOrId(*call, "project"));
  SIM_ASSIGN_OR_RETURN(const nlohmann::json body, BodyJson(*call));
  SIM_ASSIGN_OR_RETURN(const UpdateParams params, ReadInstanceUpdate(body));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  Model& model = services.model;
  Instance instance = model.select_instance(selector, project);
  const bool has_vmm = instance_has_vmm(instance.run_state);
  if (has_vmm && (params.ncpus != instance.ncpus || params.memory != instance.memory)) {
    return invalid_request("instance must be stopped to change CPU or memory");
  }
  check_instance_size(params.ncpus, params.memory);
  SIM_ASSIGN_OR_RETURN(const std::optional<std::string> boot_disk_id,
                       CheckBootDisk(model, instance, params.boot_disk, has_vmm));
  instance.ncpus = static_cast<uint32_t>(params.ncpus);
  instance.memory = params.memory;
  instance.boot_disk_id = boot_disk_id;
  instance.auto_restart_policy = params.restart_policy;
  instance.cpu_platform = params.cpu_platform;
  instance.enable_jumbo_frames = params.jumbo;
  instance.time_modified = now_rfc3339();
  model.put(instance);
  call->RespondJson(200, to_api_json(instance));
  return ApiStatus::Ok();
}

ApiStatus instance_delete(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const Instance* selected, SelectedInstance(services, call));
  const Instance instance = *selected;
  if (instance.run_state != "stopped" && instance.run_state != "failed") {
    return invalid_request(
        "cannot delete instance: instance is running or has not yet fully stopped");
  }
  WriteBatch batch(services.model.store());
  detach_all_disks(services, instance.id);
  services.model.erase_instance(instance.id);
  call->RespondEmpty(204);
  return ApiStatus::Ok();
}

ApiStatus instance_start(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(Instance * selected, SelectedInstance(services, call));
  Instance& instance = *selected;
  const std::string state = instance.run_state;
  if (state == "starting" || state == "running" || state == "rebooting" || state == "migrating") {
    call->RespondJson(202, to_api_json(instance));
    return ApiStatus::Ok();
  }
  if (state == "stopping")
    return conflict("instance must finish stopping before it can be started");
  if (state != "stopped") {
    return conflict("instance is in state " + state + " but it must be stopped to be started");
  }
  set_run_state(services, instance, "starting");
  const nlohmann::ordered_json body = to_api_json(instance);
  schedule_run_state(services, instance.id, "starting", "running");
  call->RespondJson(202, body);
  return ApiStatus::Ok();
}

ApiStatus instance_stop(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(Instance * selected, SelectedInstance(services, call));
  Instance& instance = *selected;
  const std::string state = instance.run_state;
  if (state == "creating") {
    return invalid_request("cannot change instance state while it is still being created");
  }
  if (state == "destroyed")
    return invalid_request("instance state cannot be changed from destroyed");
  if (state == "failed") set_run_state(services, instance, "stopped");
  if (state == "stopped" || state == "stopping" || state == "failed") {
    call->RespondJson(202, to_api_json(instance));
    return ApiStatus::Ok();
  }
  set_run_state(services, instance, "stopping");
  const nlohmann::ordered_json body = to_api_json(instance);
  schedule_run_state(services, instance.id, "stopping", "stopped");
  call->RespondJson(202, body);
  return ApiStatus::Ok();
}

ApiStatus instance_disk_list(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, PathNameOrId(*call, "instance"));
  SIM_ASSIGN_OR_RETURN(PageRequest page, ParsePageRequest(*call, false));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  const Instance& instance = services.model.select_instance(selector, page.project);
  std::vector<PageEntry> entries;
  for (const Disk* disk : services.model.disks_attached_to(instance.id)) {
    entries.push_back({disk->name, disk->id, to_api_json(*disk)});
  }
  call->RespondJson(200, BuildPage(std::move(entries), page));
  return ApiStatus::Ok();
}

}  // namespace

void RegisterInstanceHandlers(std::map<std::string, ApiHandler>& table) {
  table["instance_list"] = &CatchModelErrors<&instance_list>;
  table["instance_create"] = &CatchModelErrors<&instance_create>;
  table["instance_view"] = &CatchModelErrors<&instance_view>;
  table["instance_update"] = &CatchModelErrors<&instance_update>;
  table["instance_delete"] = &CatchModelErrors<&instance_delete>;
  table["instance_start"] = &CatchModelErrors<&instance_start>;
  table["instance_stop"] = &CatchModelErrors<&instance_stop>;
  table["instance_disk_list"] = &CatchModelErrors<&instance_disk_list>;
}

}  // namespace oxide_sim
