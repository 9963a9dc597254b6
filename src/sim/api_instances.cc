// /v1/instances/{instance} view/update/delete/start/stop, its disk list, and the list
// (README §9). Instance create lives in api_instance_create.cc.
#include "api_handlers.h"
#include "clock.h"
#include "instance_lifecycle.h"
#include "json_reader.h"
#include "pagination.h"

namespace oxide_sim {

void instance_create(Services& services, const CallPtr& call);  // api_instance_create.cc

namespace {

Instance& selected_instance(Services& services, const CallPtr& call) {
  const NameOrId selector = path_name_or_id(*call, "instance");
  const auto project = query_name_or_id(*call, "project");
  authenticate(services, *call);
  return services.model.select_instance(selector, project);
}

void instance_list(Services& services, const CallPtr& call) {
  PageRequest page = parse_page_request(*call, true);
  authenticate(services, *call);
  const Project& project = services.model.select_project(*page.project);
  std::vector<PageEntry> entries;
  for (const auto& [id, instance] : services.model.instances) {
    if (instance.project_id == project.id) {
      entries.push_back({instance.name, instance.id, to_api_json(instance)});
    }
  }
  call->respond_json(200, build_page(std::move(entries), page));
}

void instance_view(Services& services, const CallPtr& call) {
  call->respond_json(200, to_api_json(selected_instance(services, call)));
}

void instance_update(Services& services, const CallPtr& call) {
  const NameOrId selector = path_name_or_id(*call, "instance");
  const auto project = query_name_or_id(*call, "project");
  const nlohmann::json body = body_json(*call);
  uint64_t ncpus = 0, memory = 0;
  std::optional<NameOrId> boot_disk;
  std::optional<std::string> restart_policy, cpu_platform;
  bool jumbo = false;
  try {
    ObjectReader reader(body, "InstanceUpdate");
    for (const char* key : {"auto_restart_policy", "boot_disk", "cpu_platform"}) {
      if (reader.raw(key) == nullptr) throw BodyError(std::string("missing field `") + key + "`");
    }
    ncpus = reader.u64("ncpus", "u16");
    memory = reader.u64("memory");
    boot_disk = reader.optional_name_or_id("boot_disk");
    if (reader.has("auto_restart_policy")) {
      restart_policy = check_variant(*reader.raw("auto_restart_policy"), {"never", "best_effort"});
    }
    if (reader.has("cpu_platform")) {
      cpu_platform =
          check_variant(*reader.raw("cpu_platform"), {"amd_milan", "amd_turin", "amd_turin_v2"});
    }
    jumbo = reader.boolean("enable_jumbo_frames");
    reader.raw("multicast_groups");
    reader.finish();
  } catch (const BodyError& problem) {
    throw bad_json_body(problem.what());
  }
  authenticate(services, *call);
  Model& model = services.model;
  Instance instance = model.select_instance(selector, project);
  const bool has_vmm = instance_has_vmm(instance.run_state);
  if (has_vmm && (ncpus != instance.ncpus || memory != instance.memory)) {
    throw invalid_request("instance must be stopped to change CPU or memory");
  }
  check_instance_size(ncpus, memory);
  std::optional<std::string> boot_disk_id;
  if (boot_disk) {
    const Disk& disk = boot_disk->is_id
                           ? model.select_disk(*boot_disk, std::nullopt)
                           : model.select_disk(*boot_disk, NameOrId{true, instance.project_id});
    boot_disk_id = disk.id;
    if (boot_disk_id != instance.boot_disk_id) {
      if (has_vmm) throw invalid_request("instance must be stopped to set boot disk");
      if (disk.state != "attached" || disk.instance_id != instance.id) {
        throw invalid_request("boot disk must be attached to the instance");
      }
    }
  } else if (instance.boot_disk_id && has_vmm) {
    throw invalid_request("instance must be stopped to set boot disk");
  }
  instance.ncpus = static_cast<uint32_t>(ncpus);
  instance.memory = memory;
  instance.boot_disk_id = boot_disk_id;
  instance.auto_restart_policy = restart_policy;
  instance.cpu_platform = cpu_platform;
  instance.enable_jumbo_frames = jumbo;
  instance.time_modified = now_rfc3339();
  model.put(instance);
  call->respond_json(200, to_api_json(instance));
}

void instance_delete(Services& services, const CallPtr& call) {
  const Instance instance = selected_instance(services, call);
  if (instance.run_state != "stopped" && instance.run_state != "failed") {
    throw invalid_request(
        "cannot delete instance: instance is running or has not yet fully stopped");
  }
  WriteBatch batch(services.model.store());
  detach_all_disks(services, instance.id);
  services.model.erase_instance(instance.id);
  call->respond_empty(204);
}

void instance_start(Services& services, const CallPtr& call) {
  Instance& instance = selected_instance(services, call);
  const std::string state = instance.run_state;
  if (state == "starting" || state == "running" || state == "rebooting" || state == "migrating") {
    call->respond_json(202, to_api_json(instance));
    return;
  }
  if (state == "stopping") throw conflict("instance must finish stopping before it can be started");
  if (state != "stopped") {
    throw conflict("instance is in state " + state + " but it must be stopped to be started");
  }
  set_run_state(services, instance, "starting");
  const nlohmann::ordered_json body = to_api_json(instance);
  schedule_run_state(services, instance.id, "starting", "running");
  call->respond_json(202, body);
}

void instance_stop(Services& services, const CallPtr& call) {
  Instance& instance = selected_instance(services, call);
  const std::string state = instance.run_state;
  if (state == "creating") {
    throw invalid_request("cannot change instance state while it is still being created");
  }
  if (state == "destroyed")
    throw invalid_request("instance state cannot be changed from destroyed");
  if (state == "failed") set_run_state(services, instance, "stopped");
  if (state == "stopped" || state == "stopping" || state == "failed") {
    call->respond_json(202, to_api_json(instance));
    return;
  }
  set_run_state(services, instance, "stopping");
  const nlohmann::ordered_json body = to_api_json(instance);
  schedule_run_state(services, instance.id, "stopping", "stopped");
  call->respond_json(202, body);
}

void instance_disk_list(Services& services, const CallPtr& call) {
  const NameOrId selector = path_name_or_id(*call, "instance");
  PageRequest page = parse_page_request(*call, false);
  authenticate(services, *call);
  const Instance& instance = services.model.select_instance(selector, page.project);
  std::vector<PageEntry> entries;
  for (const Disk* disk : services.model.disks_attached_to(instance.id)) {
    entries.push_back({disk->name, disk->id, to_api_json(*disk)});
  }
  call->respond_json(200, build_page(std::move(entries), page));
}

}  // namespace

void register_instance_handlers(std::map<std::string, ApiHandler>& table) {
  table["instance_list"] = &instance_list;
  table["instance_create"] = &instance_create;
  table["instance_view"] = &instance_view;
  table["instance_update"] = &instance_update;
  table["instance_delete"] = &instance_delete;
  table["instance_start"] = &instance_start;
  table["instance_stop"] = &instance_stop;
  table["instance_disk_list"] = &instance_disk_list;
}

}  // namespace oxide_sim
