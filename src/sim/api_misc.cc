// /v1/ping, /v1/me, /v1/utilization and /v1/projects/{project} (README §6).
#include "api_handlers.h"
#include "clock.h"
#include "json_reader.h"
#include "model_errors.h"

namespace oxide_sim {
namespace {

// Fixed identity of the simulated caller.
constexpr const char* kUserId = "001de000-05e4-4000-8000-000000004007";
constexpr const char* kSiloId = "001de000-5110-4000-8000-000000000001";

ApiStatus ping(Services&, const CallPtr& call) {
  call->RespondJson(200, {{"status", "ok"}});
  return ApiStatus::Ok();
}

ApiStatus current_user_view(Services& services, const CallPtr& call) {
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
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
  call->RespondJson(200, user);
  return ApiStatus::Ok();
}

ApiStatus utilization_view(Services& services, const CallPtr& call) {
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
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
  call->RespondJson(200, out);
  return ApiStatus::Ok();
}

ApiResult<NameOrId> ProjectPath(const ApiCall& call) {
  return PathNameOrId(call, "project");
}

ApiStatus project_view(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, ProjectPath(*call));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  call->RespondJson(200, to_api_json(services.model.select_project(selector)));
  return ApiStatus::Ok();
}

ApiStatus project_update(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, ProjectPath(*call));
  SIM_ASSIGN_OR_RETURN(const nlohmann::json body, BodyJson(*call));
  SIM_ASSIGN_OR_RETURN(ObjectReader reader, BodyField(ObjectReader::Open(body, "ProjectUpdate")));
  SIM_ASSIGN_OR_RETURN(const std::optional<std::string> name,
                       BodyField(reader.OptionalName("name")));
  SIM_ASSIGN_OR_RETURN(const std::optional<std::string> description,
                       BodyField(reader.OptionalString("description")));
  SIM_RETURN_IF_ERROR(BodyCheck(reader.Finish()));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  Model& model = services.model;
  Project project = model.select_project(selector);
  if (name && *name != project.name && model.project_by(NameOrId{false, *name}) != nullptr) {
    return already_exists("project", *name);
  }
  if (name) project.name = *name;
  if (description) project.description = *description;
  project.time_modified = now_rfc3339();
  model.put(project);
  call->RespondJson(200, to_api_json(project));
  return ApiStatus::Ok();
}

ApiStatus project_delete(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, ProjectPath(*call));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  Model& model = services.model;
  const Project project = model.select_project(selector);
  for (const auto& [id, instance] : model.instances) {
    if (instance.project_id == project.id) {
      return invalid_request("project to be deleted contains a instance: " + instance.name);
    }
  }
  for (const auto& [id, disk] : model.disks) {
    if (disk.project_id == project.id) {
      return invalid_request("project to be deleted contains a disk: " + disk.name);
    }
  }
  for (const auto& [id, snapshot] : model.snapshots) {
    if (snapshot.project_id == project.id) {
      return invalid_request("project to be deleted contains a snapshot: " + snapshot.name);
    }
  }
  model.erase_project(project.id);
  call->RespondEmpty(204);
  return ApiStatus::Ok();
}

}  // namespace

void RegisterMiscHandlers(std::map<std::string, ApiHandler>& table) {
  table["ping"] = &CatchModelErrors<&ping>;
  table["current_user_view"] = &CatchModelErrors<&current_user_view>;
  table["utilization_view"] = &CatchModelErrors<&utilization_view>;
  table["project_view"] = &CatchModelErrors<&project_view>;
  table["project_update"] = &CatchModelErrors<&project_update>;
  table["project_delete"] = &CatchModelErrors<&project_delete>;
}

const std::map<std::string, ApiHandler>& ApiHandlers() {
  static const std::map<std::string, ApiHandler> table = [] {
    std::map<std::string, ApiHandler> all;
    RegisterMiscHandlers(all);
    RegisterDiskHandlers(all);
    RegisterSnapshotHandlers(all);
    RegisterInstanceHandlers(all);
    RegisterAttachHandlers(all);
    return all;
  }();
  return table;
}

}  // namespace oxide_sim
