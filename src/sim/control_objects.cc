// The control API's endpoints that make or change objects directly, with no saga (projects,
// instances, disk states, freeze/release/fault), and the creation of projects and instances the
// start-up seeds share with them (control_api.h).
#include <filesystem>
#include <stdexcept>

#include "clock.h"
#include "control_api.h"
#include "control_handlers.h"
#include "guest_devices.h"
#include "ids.h"
#include "instance_lifecycle.h"

namespace oxide_sim {
namespace {

// Finds the object a freeze/release/fault body names: {"kind", "id"} or {"kind", "name"}.
struct Target {
  std::string kind, id, name;
};
Target find_target(Model& model, const nlohmann::json& body, bool must_exist) {
  Target target;
  target.kind = require_string(body, "kind");
  if (target.kind != "disk" && target.kind != "snapshot" && target.kind != "instance") {
    throw std::invalid_argument("kind must be disk, snapshot or instance");
  }
  if (body.contains("id")) target.id = canonical_uuid(require_string(body, "id"));
  if (body.contains("name")) target.name = require_string(body, "name");
  if (target.id.empty() && target.name.empty())
    throw std::invalid_argument("give \"id\" or \"name\"");
  auto resolve = [&](auto& objects) {
    for (auto& [id, object] : objects) {
      if (id == target.id || (!target.name.empty() && object.name == target.name)) {
        target.id = id;
        target.name = object.name;
        return true;
      }
    }
    return false;
  };
  bool found = target.kind == "disk"       ? resolve(model.disks)
               : target.kind == "snapshot" ? resolve(model.snapshots)
                                           : resolve(model.instances);
  if (must_exist && !found) throw std::out_of_range(target.kind + " not found");
  return target;
}

// An absolute directory for a guest's own sysfs tree; never the kernel's own trees.
std::string check_sysfs_root(const std::string& root) {
  const std::filesystem::path path = std::filesystem::path(root).lexically_normal();
  if (!path.is_absolute() || path == "/") {
    throw std::invalid_argument("\"guest_sysfs_root\" must be an absolute path below /");
  }
  for (const char* kernel : {"/sys", "/proc", "/dev"}) {
    const std::string text = path.string();
    if (text == kernel || text.rfind(std::string(kernel) + "/", 0) == 0) {
      throw std::invalid_argument("\"guest_sysfs_root\" must not be in " + std::string(kernel));
    }
  }
  return path.string();
}

// Sets a faulted object's state: a disk faulted and detached, a snapshot faulted, an instance
// failed.
void mark_faulted(Services& services, const Target& target) {
  Model& model = services.model;
  if (target.kind == "disk") {
    Disk& disk = model.disks.at(target.id);
    disk.state = "faulted";
    disk.instance_id.clear();
    model.put(disk);
  } else if (target.kind == "snapshot") {
    model.snapshots.at(target.id).state = "faulted";
    model.put(model.snapshots.at(target.id));
  } else {
    set_run_state(services, model.instances.at(target.id), "failed");
  }
}

}  // namespace

HttpResponse post_project(const ControlCall& call) {
  const std::string name = require_string(call.body, "name");
  check_name(name);
  return ordered_control_json(201, to_api_json(ensure_project(call.context.services.model, name,
                                                              call.body.value("description", ""))));
}

HttpResponse post_instance(const ControlCall& call) {
  return ordered_control_json(201,
                              instance_view(create_sim_instance(call.context.services, call.body)));
}

// PUT /__sim/instances/{id-or-name} {"run_state"?, "guest_local"?}.
HttpResponse put_instance(const ControlCall& call) {
  Services& services = call.context.services;
  const nlohmann::json& body = call.body;
  Instance* instance = find_instance(services.model, call.segments[2]);
  if (instance == nullptr) return control_error(404, "instance not found");
  if (body.contains("guest_local")) instance->guest_local = body.at("guest_local").get<bool>();
  if (body.contains("run_state")) {
    const std::string state = require_string(body, "run_state");
    check_run_state(state);
    instance->run_state = state;
  }
  set_run_state(services, *instance, instance->run_state);
  return ordered_control_json(200, instance_view(*instance));
}

// POST /__sim/instances/{id-or-name}/device-order {"disk_names": [...]}: the order in which the
// instance's disks get their loop devices at its starts from now on (the rest follow by name).
HttpResponse post_device_order(const ControlCall& call) {
  Services& services = call.context.services;
  Instance* instance = find_instance(services.model, call.segments[2]);
  if (instance == nullptr) return control_error(404, "instance not found");
  auto names = call.body.find("disk_names");
  if (names == call.body.end() || !names->is_array()) {
    throw std::invalid_argument("\"disk_names\" (array of disk names) is required");
  }
  std::vector<std::string> order;
  for (const auto& name : *names) {
    if (!name.is_string()) throw std::invalid_argument("\"disk_names\": every entry is a string");
    order.push_back(name.get<std::string>());
  }
  instance->guest_device_order = std::move(order);
  services.model.put(*instance);
  return ordered_control_json(200, instance_view(*instance));
}

// PUT /__sim/disks/{id-or-name} {"state", "instance"?}: sets a disk's state directly (no saga),
// for tests that need each DiskState, and labels outside it (a newer Oxide's). The attach
// states need "instance" (an instance id or name); the others drop it.
HttpResponse put_disk_state(const ControlCall& call) {
  Services& services = call.context.services;
  Model& model = services.model;
  const std::string& selector = call.segments[2];
  Disk* disk = nullptr;
  for (auto& [id, candidate] : model.disks) {
    if (id == canonical_uuid(selector) || candidate.name == selector) disk = &candidate;
  }
  if (disk == nullptr) return control_error(404, "disk not found");
  // Steps a saga still holds would overwrite the state afterwards: they run first.
  const std::string disk_id = disk->id;
  services.timeline.Force("disk", disk_id);
  auto still = model.disks.find(disk_id);
  if (still == model.disks.end()) return control_error(404, "disk not found");
  disk = &still->second;
  const std::string state = require_string(call.body, "state");
  if (state.empty() ||
      state.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos) {
    throw std::invalid_argument("\"state\" must be a snake_case label");
  }
  const bool holds = state == "attaching" || state == "attached" || state == "detaching";
  std::string instance_id;
  if (holds) {
    Instance* instance = find_instance(model, require_string(call.body, "instance"));
    if (instance == nullptr) return control_error(404, "instance not found");
    instance_id = instance->id;
  }
  disk->state = state;
  disk->instance_id = instance_id;
  model.put(*disk);
  services.guest.reconcile(model);
  return ordered_control_json(200, to_api_json(*disk));
}

HttpResponse post_freeze(const ControlCall& call) {
  Model& model = call.context.services.model;
  const Target target = find_target(model, call.body, false);
  model.frozen.insert(target.kind + ":" + (target.id.empty() ? target.name : target.id));
  if (!target.name.empty()) model.frozen.insert(target.kind + ":" + target.name);
  model.save_frozen();
  return control_json(200, {{"frozen", model.frozen}});
}

HttpResponse post_release(const ControlCall& call) {
  Services& services = call.context.services;
  Model& model = services.model;
  const Target target = find_target(model, call.body, false);
  model.frozen.erase(target.kind + ":" + target.id);
  model.frozen.erase(target.kind + ":" + target.name);
  model.save_frozen();
  services.timeline.ReleaseUnfrozen();
  return control_json(200, {{"frozen", model.frozen}});
}

HttpResponse post_fault(const ControlCall& call) {
  Services& services = call.context.services;
  Model& model = services.model;
  const Target target = find_target(model, call.body, true);
  model.frozen.erase(target.kind + ":" + target.id);  // a faulted resource is no longer held
  model.frozen.erase(target.kind + ":" + target.name);
  model.save_frozen();
  mark_faulted(services, target);
  services.guest.reconcile(model);
  services.timeline.Force(target.kind, target.id);
  return control_json(200, {{"faulted", target.id}});
}

Project ensure_project(Model& model, const std::string& name, const std::string& description) {
  if (Project* existing = model.project_by(NameOrId{false, name})) return *existing;
  Project project;
  project.id = new_uuid();
  project.name = name;
  project.description = description;
  project.time_created = now_rfc3339();
  project.time_modified = project.time_created;
  model.put(project);
  return project;
}

Instance create_sim_instance(Services& services, const nlohmann::json& spec) {
  Model& model = services.model;
  const std::string project_name = require_string(spec, "project");
  const std::string name = require_string(spec, "name");
  check_name(name);
  auto selector = ParseNameOrId(project_name);
  Project* project = selector.ok() ? model.project_by(*selector) : nullptr;
  if (project == nullptr) throw std::out_of_range("project \"" + project_name + "\" not found");
  if (model.instance_named(project->id, name) != nullptr) {
    throw std::invalid_argument("instance \"" + name + "\" already exists");
  }
  Instance instance;
  instance.id = new_uuid();
  instance.name = name;
  instance.description = spec.value("description", "");
  instance.project_id = project->id;
  instance.hostname = spec.value("hostname", name);
  instance.ncpus = spec.value("ncpus", 2U);
  instance.memory = spec.value("memory", 4 * kGiB);
  instance.run_state = spec.value("run_state", "running");
  check_run_state(instance.run_state);
  instance.guest_local = spec.value("guest_local", false);
  if (spec.contains("guest_sysfs_root") && !spec.at("guest_sysfs_root").is_null()) {
    instance.guest_sysfs_root = check_sysfs_root(require_string(spec, "guest_sysfs_root"));
    std::string problem;
    if (!services.guest.use_sysfs_root(instance.guest_sysfs_root, &problem)) {
      throw std::invalid_argument(problem);
    }
  }
  instance.time_created = now_rfc3339();
  instance.time_modified = instance.time_created;
  set_run_state(services, instance, instance.run_state);
  return instance;
}

}  // namespace oxide_sim
