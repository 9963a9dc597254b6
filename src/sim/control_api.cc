#include "control_api.h"

#include <filesystem>
#include <stdexcept>

#include "clock.h"
#include "guest_devices.h"
#include "ids.h"
#include "instance_lifecycle.h"

namespace oxide_sim {
namespace {

const std::vector<std::string> kRunStates = {"creating", "starting",  "running",   "stopping",
                                             "stopped",  "rebooting", "migrating", "repairing",
                                             "failed",   "destroyed"};

HttpResponse control_json(int status, const nlohmann::json& body) {
  return json_response(status, body.dump());
}

HttpResponse ordered_control_json(int status, const nlohmann::ordered_json& body) {
  return json_response(status, body.dump());
}

HttpResponse control_error(int status, const std::string& message) {
  return control_json(status, {{"message", message}});
}

nlohmann::ordered_json instance_view(const Instance& instance) {
  nlohmann::ordered_json out = to_api_json(instance);
  out["guest_local"] = instance.guest_local;
  out["guest_sysfs_root"] = instance.guest_sysfs_root.empty()
                                ? nlohmann::ordered_json(nullptr)
                                : nlohmann::ordered_json(instance.guest_sysfs_root);
  out["guest_device_order"] = instance.guest_device_order;
  return out;
}

std::string require_string(const nlohmann::json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || !it->is_string()) {
    throw std::invalid_argument(std::string("\"") + key + "\" (string) is required");
  }
  return it->get<std::string>();
}

void check_name(const std::string& name) {
  if (oxide::Status valid = ValidateName(name); !valid.ok()) {
    throw std::invalid_argument(valid.message());
  }
}

void check_run_state(const std::string& state) {
  if (std::find(kRunStates.begin(), kRunStates.end(), state) == kRunStates.end()) {
    throw std::invalid_argument("unknown run_state \"" + state + "\"");
  }
}

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

HttpResponse put_config(Model& model, const nlohmann::json& body) {
  TimingSettings& timing = model.timing;
  timing.create_delay_ms = body.value("create_delay_ms", timing.create_delay_ms);
  timing.delete_delay_ms = body.value("delete_delay_ms", timing.delete_delay_ms);
  timing.instance_delay_ms = body.value("instance_delay_ms", timing.instance_delay_ms);
  timing.async_mode = body.value("async", timing.async_mode);
  timing.hotplug = body.value("hotplug", timing.hotplug);
  model.quota.storage = body.value("storage_quota", model.quota.storage);
  model.quota.cpus = body.value("cpus_quota", model.quota.cpus);
  model.quota.memory = body.value("memory_quota", model.quota.memory);
  model.physical_disk_bytes = body.value("physical_disk_bytes", model.physical_disk_bytes);
  model.save_quota();
  return control_json(200, {{"create_delay_ms", timing.create_delay_ms},
                            {"delete_delay_ms", timing.delete_delay_ms},
                            {"instance_delay_ms", timing.instance_delay_ms},
                            {"async", timing.async_mode},
                            {"hotplug", timing.hotplug},
                            {"storage_quota", model.quota.storage},
                            {"cpus_quota", model.quota.cpus},
                            {"memory_quota", model.quota.memory},
                            {"physical_disk_bytes", model.physical_disk_bytes}});
}

// The instance a control path names by id or name; nullptr when there is none.
Instance* find_instance(Model& model, const std::string& selector) {
  Instance* instance = model.instance(canonical_uuid(selector));
  for (auto& [id, candidate] : model.instances) {
    if (instance == nullptr && candidate.name == selector) instance = &candidate;
  }
  return instance;
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

HttpResponse update_instance(Services& services, const std::string& selector,
                             const nlohmann::json& body) {
  Instance* instance = find_instance(services.model, selector);
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

// PUT /__sim/disks/{id-or-name} {"state", "instance"?}: sets a disk's state directly (no saga),
// for tests that need each DiskState, and labels outside it (a newer Oxide's). The attach
// states need "instance" (an instance id or name); the others drop it.
HttpResponse set_disk_state(Services& services, const std::string& selector,
                            const nlohmann::json& body) {
  Model& model = services.model;
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
  const std::string state = require_string(body, "state");
  if (state.empty() ||
      state.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos) {
    throw std::invalid_argument("\"state\" must be a snake_case label");
  }
  const bool holds = state == "attaching" || state == "attached" || state == "detaching";
  std::string instance_id;
  if (holds) {
    Instance* instance = find_instance(model, require_string(body, "instance"));
    if (instance == nullptr) return control_error(404, "instance not found");
    instance_id = instance->id;
  }
  disk->state = state;
  disk->instance_id = instance_id;
  model.put(*disk);
  services.guest.reconcile(model);
  return ordered_control_json(200, to_api_json(*disk));
}

// POST /__sim/instances/{id-or-name}/device-order {"disk_names": [...]}: the order in which the
// instance's disks get their loop devices at its starts from now on (the rest follow by name).
HttpResponse set_device_order(Services& services, const std::string& selector,
                              const nlohmann::json& body) {
  Instance* instance = find_instance(services.model, selector);
  if (instance == nullptr) return control_error(404, "instance not found");
  auto names = body.find("disk_names");
  if (names == body.end() || !names->is_array()) {
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

HttpResponse dump_state(Services& services) {
  nlohmann::ordered_json out;
  for (const char* kind : {"projects", "disks", "snapshots", "instances"}) {
    out[kind] = nlohmann::ordered_json::array();
  }
  for (const auto& [id, object] : services.model.projects)
    out["projects"].push_back(to_api_json(object));
  for (const auto& [id, object] : services.model.disks)
    out["disks"].push_back(to_api_json(object));
  for (const auto& [id, object] : services.model.snapshots)
    out["snapshots"].push_back(to_api_json(object));
  for (const auto& [id, object] : services.model.instances)
    out["instances"].push_back(instance_view(object));
  out["frozen"] = services.model.frozen;
  out["guest_devices"] = services.guest.visible_count();
  out["pending_transitions"] = services.timeline.PendingCount();
  return ordered_control_json(200, out);
}

// GET /__sim/clock, POST /__sim/clock/advance {"ms": N}: the manual clock of --manual-clock.
HttpResponse clock_endpoint(Services& services, const std::string& method,
                            const std::vector<std::string>& segments, const nlohmann::json& body) {
  Timeline& timeline = services.timeline;
  const bool advance = segments.size() == 3 && segments[2] == "advance" && method == "POST";
  if (!advance && !(segments.size() == 2 && method == "GET")) {
    return control_error(404, "no such control endpoint: " + method + " /__sim/clock" +
                                  (segments.size() > 2 ? "/" + segments[2] : ""));
  }
  uint64_t ran = 0;
  if (advance) {
    if (!timeline.manual_clock()) {
      return control_error(409, "the clock is not manual; start oxide-sim with --manual-clock");
    }
    auto ms = body.find("ms");
    if (ms == body.end() || !ms->is_number_unsigned()) {
      throw std::invalid_argument("\"ms\" (non-negative integer) is required");
    }
    ran = timeline.AdvanceManualClock(ms->get<uint64_t>());
    set_wall_offset_ms(static_cast<long long>(timeline.manual_now_ms()));
  }
  return control_json(200, {{"manual", timeline.manual_clock()},
                            {"now_ms", timeline.manual_now_ms()},
                            {"steps_run", ran},
                            {"pending_transitions", timeline.PendingCount()}});
}

// GET /__sim/auth/tokens, POST /__sim/auth/tokens {"tokens":[...]}: the accepted bearer tokens.
HttpResponse tokens_endpoint(AuthConfig& auth, const std::string& method,
                             const std::vector<std::string>& segments, const nlohmann::json& body) {
  if (segments.size() != 3 || segments[2] != "tokens" || (method != "GET" && method != "POST")) {
    return control_error(404, "no such control endpoint: " + method + " /__sim/auth" +
                                  (segments.size() > 2 ? "/" + segments[2] : ""));
  }
  if (method == "POST") {
    auto tokens = body.find("tokens");
    if (tokens == body.end() || !tokens->is_array() || tokens->empty()) {
      throw std::invalid_argument("\"tokens\" (non-empty array of strings) is required");
    }
    std::vector<std::string> accepted;
    for (const auto& token : *tokens) {
      if (!token.is_string() || token.get<std::string>().rfind("oxide-token-", 0) != 0) {
        throw std::invalid_argument(
            "\"tokens\": every entry must be a string starting with \"oxide-token-\"");
      }
      accepted.push_back(token.get<std::string>());
    }
    auth.tokens = std::move(accepted);
  }
  return control_json(200, {{"tokens", auth.tokens}});
}

HttpResponse route(ControlContext& context, const HttpRequest& request,
                   const std::vector<std::string>& segments) {
  Services& services = context.services;
  Model& model = services.model;
  const std::string& method = request.method;
  const std::string what = segments.size() > 1 ? segments[1] : "";
  const nlohmann::json body =
      request.body.empty() ? nlohmann::json::object() : nlohmann::json::parse(request.body);
  if (!body.is_object()) throw std::invalid_argument("the body must be a JSON object");

  if (what == "state" && method == "GET") return dump_state(services);
  if (what == "clock") return clock_endpoint(services, method, segments, body);
  if (what == "auth") return tokens_endpoint(context.auth, method, segments, body);
  if (what == "reset" && method == "POST") {
    context.reset();
    return control_json(200, {{"reset", true}});
  }
  if (what == "config" && (method == "PUT" || method == "GET")) {
    return put_config(model, method == "GET" ? nlohmann::json::object() : body);
  }
  if (what == "projects" && method == "POST") {
    const std::string name = require_string(body, "name");
    check_name(name);
    return ordered_control_json(
        201, to_api_json(ensure_project(model, name, body.value("description", ""))));
  }
  if (what == "instances" && segments.size() == 2 && method == "POST") {
    return ordered_control_json(201, instance_view(create_sim_instance(services, body)));
  }
  if (what == "instances" && segments.size() == 3 && method == "PUT") {
    return update_instance(services, segments[2], body);
  }
  if (what == "instances" && segments.size() == 4 && segments[3] == "device-order" &&
      method == "POST") {
    return set_device_order(services, segments[2], body);
  }
  if (what == "disks" && segments.size() == 3 && method == "PUT") {
    return set_disk_state(services, segments[2], body);
  }
  if (what == "freeze" && method == "POST") {
    const Target target = find_target(model, body, false);
    model.frozen.insert(target.kind + ":" + (target.id.empty() ? target.name : target.id));
    if (!target.name.empty()) model.frozen.insert(target.kind + ":" + target.name);
    model.save_frozen();
    return control_json(200, {{"frozen", model.frozen}});
  }
  if (what == "release" && method == "POST") {
    const Target target = find_target(model, body, false);
    model.frozen.erase(target.kind + ":" + target.id);
    model.frozen.erase(target.kind + ":" + target.name);
    model.save_frozen();
    services.timeline.ReleaseUnfrozen();
    return control_json(200, {{"frozen", model.frozen}});
  }
  if (what == "fault" && method == "POST") {
    const Target target = find_target(model, body, true);
    model.frozen.erase(target.kind + ":" + target.id);  // a faulted resource is no longer held
    model.frozen.erase(target.kind + ":" + target.name);
    model.save_frozen();
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
    services.guest.reconcile(model);
    services.timeline.Force(target.kind, target.id);
    return control_json(200, {{"faulted", target.id}});
  }
  if (what == "faults" && method == "GET") return control_json(200, context.faults.to_json());
  if (what == "faults" && method == "DELETE") {
    context.faults.configure(context.faults.seed(), {});
    return control_json(200, context.faults.to_json());
  }
  if (what == "faults" && method == "PUT") {
    std::vector<FaultRule> rules;
    for (const auto& item : body.value("rules", nlohmann::json::array())) {
      rules.push_back(Faults::rule_from_json(item));
    }
    context.faults.configure(body.value("seed", context.faults.seed()), std::move(rules));
    return control_json(200, context.faults.to_json());
  }
  if (what == "requests" && method == "GET") return control_json(200, context.log.to_json());
  if (what == "requests" && method == "DELETE") {
    context.log.clear();
    return control_json(200, context.log.to_json());
  }
  return control_error(404,
                       "no such control endpoint: " + method + " /" + segments[0] + "/" + what);
}

}  // namespace

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

HttpResponse handle_control(ControlContext& context, const HttpRequest& request,
                            const std::vector<std::string>& segments, const QueryPairs&) {
  try {
    return route(context, request, segments);
  } catch (const std::out_of_range& problem) {
    return control_error(404, problem.what());
  } catch (const std::exception& problem) {
    return control_error(400, problem.what());
  }
}

}  // namespace oxide_sim
