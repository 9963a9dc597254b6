// /v1/ping, /v1/me, /v1/utilization and /v1/projects/{project} (README §6).
#include "api_handlers.h"
#include "clock.h"
#include "json_reader.h"

namespace oxide_sim {
namespace {

// Fixed identity of the simulated caller.
constexpr const char* kUserId = "001de000-05e4-4000-8000-000000004007";
constexpr const char* kSiloId = "001de000-5110-4000-8000-000000000001";

void ping(Services&, const CallPtr& call) {
  call->respond_json(200, {{"status", "ok"}});
}

void current_user_view(Services& services, const CallPtr& call) {
  authenticate(services, *call);
  static const std::string created = now_rfc3339();
  nlohmann::ordered_json user;
  user["id"] = kUserId;
  user["display_name"] = "oxide-sim user";
  user["silo_id"] = kSiloId;
  user["silo_name"] = "sim-silo";
  user["silo_admin"] = true;
  user["fleet_viewer"] = false;
  user["time_created"] = created;
  user["time_modified"] = created;
  call->respond_json(200, user);
}

void utilization_view(Services& services, const CallPtr& call) {
  authenticate(services, *call);
  const Model& model = services.model;
  nlohmann::ordered_json capacity;
  capacity["cpus"] = model.quota.cpus;
  capacity["memory"] = model.quota.memory;
  capacity["storage"] = model.quota.storage;
  nlohmann::ordered_json provisioned;
  provisioned["cpus"] = model.provisioned_cpus();
  provisioned["memory"] = model.provisioned_memory();
  provisioned["storage"] = model.provisioned_storage();
  nlohmann::ordered_json out;
  out["capacity"] = capacity;
  out["provisioned"] = provisioned;
  call->respond_json(200, out);
}

NameOrId project_path(const ApiCall& call) {
  return path_name_or_id(call, "project");
}

void project_view(Services& services, const CallPtr& call) {
  const NameOrId selector = project_path(*call);
  authenticate(services, *call);
  call->respond_json(200, to_api_json(services.model.select_project(selector)));
}

void project_update(Services& services, const CallPtr& call) {
  const NameOrId selector = project_path(*call);
  const nlohmann::json body = body_json(*call);
  std::optional<std::string> name, description;
  try {
    ObjectReader reader(body, "ProjectUpdate");
    name = reader.optional_name("name");
    description = reader.optional_string("description");
    reader.finish();
  } catch (const BodyError& problem) {
    throw bad_json_body(problem.what());
  }
  authenticate(services, *call);
  Model& model = services.model;
  Project project = model.select_project(selector);
  if (name && *name != project.name && model.project_by(NameOrId{false, *name}) != nullptr) {
    throw already_exists("project", *name);
  }
  if (name) project.name = *name;
  if (description) project.description = *description;
  project.time_modified = now_rfc3339();
  model.put(project);
  call->respond_json(200, to_api_json(project));
}

void project_delete(Services& services, const CallPtr& call) {
  const NameOrId selector = project_path(*call);
  authenticate(services, *call);
  Model& model = services.model;
  const Project project = model.select_project(selector);
  for (const auto& [id, instance] : model.instances) {
    if (instance.project_id == project.id) {
      throw invalid_request("project to be deleted contains a instance: " + instance.name);
    }
  }
  for (const auto& [id, disk] : model.disks) {
    if (disk.project_id == project.id) {
      throw invalid_request("project to be deleted contains a disk: " + disk.name);
    }
  }
  for (const auto& [id, snapshot] : model.snapshots) {
    if (snapshot.project_id == project.id) {
      throw invalid_request("project to be deleted contains a snapshot: " + snapshot.name);
    }
  }
  model.erase_project(project.id);
  call->respond_empty(204);
}

}  // namespace

void register_misc_handlers(std::map<std::string, ApiHandler>& table) {
  table["ping"] = &ping;
  table["current_user_view"] = &current_user_view;
  table["utilization_view"] = &utilization_view;
  table["project_view"] = &project_view;
  table["project_update"] = &project_update;
  table["project_delete"] = &project_delete;
}

const std::map<std::string, ApiHandler>& api_handlers() {
  static const std::map<std::string, ApiHandler> table = [] {
    std::map<std::string, ApiHandler> all;
    register_misc_handlers(all);
    register_disk_handlers(all);
    register_snapshot_handlers(all);
    register_instance_handlers(all);
    register_attach_handlers(all);
    return all;
  }();
  return table;
}

}  // namespace oxide_sim
