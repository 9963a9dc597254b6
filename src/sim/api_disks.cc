// GET/POST /v1/disks, GET/DELETE /v1/disks/{disk} (README §7).
#include "api_handlers.h"
#include "clock.h"
#include "disk_rules.h"
#include "guest_devices.h"
#include "json_reader.h"
#include "model_errors.h"
#include "pagination.h"

namespace oxide_sim {
namespace {

ApiStatus disk_list(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(PageRequest page, ParsePageRequest(*call, true));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  const Project& project = services.model.select_project(*page.project);
  std::vector<PageEntry> entries;
  for (const auto& [id, disk] : services.model.disks) {
    if (disk.project_id == project.id) entries.push_back({disk.name, disk.id, to_api_json(disk)});
  }
  call->RespondJson(200, BuildPage(std::move(entries), page));
  return ApiStatus::Ok();
}

ApiStatus disk_create(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId project_selector, RequiredQueryProject(*call));
  SIM_ASSIGN_OR_RETURN(const nlohmann::json body, BodyJson(*call));
  SIM_ASSIGN_OR_RETURN(ObjectReader reader, BodyField(ObjectReader::Open(body, "DiskCreate")));
  SIM_ASSIGN_OR_RETURN(const DiskCreateParams params, BodyField(ReadDiskCreate(reader)));
  SIM_RETURN_IF_ERROR(BodyCheck(reader.Finish()));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  Model& model = services.model;
  const Project& project = model.select_project(project_selector);
  const Disk disk = plan_new_disk(model, project, params);
  model.put(disk);
  services.guest.disk_created(disk, disk.snapshot_id);
  const nlohmann::ordered_json created = to_api_json(disk);
  if (disk.state != "creating") {
    call->RespondJson(201, created);
    return ApiStatus::Ok();
  }
  const bool async = model.timing.async_mode;
  if (async) call->RespondJson(201, created);
  const std::string id = disk.id;
  const std::string final_state = params.source == "importing_blocks" ? "import_ready" : "detached";
  services.timeline.Run(model.timing.create_delay_ms, {"disk", disk.id, disk.name},
                        [&services, call, id, created, async, final_state]() {
                          Disk* current = services.model.disk(id);
                          if (current == nullptr || current->state == "faulted") {
                            if (!async) call->RespondError(internal_error());
                            return;
                          }
                          if (current->state != "creating") {  // attached meanwhile
                            if (!async) call->RespondJson(201, created);
                            return;
                          }
                          current->state = final_state;
                          current->time_modified = now_rfc3339();
                          services.model.put(*current);
                          if (!async) call->RespondJson(201, created);
                        });
  return ApiStatus::Ok();
}

ApiStatus disk_view(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, PathNameOrId(*call, "disk"));
  SIM_ASSIGN_OR_RETURN(const std::optional<NameOrId> project, QueryNameOrId(*call, "project"));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  call->RespondJson(200, to_api_json(services.model.select_disk(selector, project)));
  return ApiStatus::Ok();
}

ApiStatus disk_delete(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, PathNameOrId(*call, "disk"));
  SIM_ASSIGN_OR_RETURN(const std::optional<NameOrId> project, QueryNameOrId(*call, "project"));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  Model& model = services.model;
  const Disk disk = model.select_disk(selector, project);
  if (disk.state != "detached" && disk.state != "faulted") {
    return invalid_request("disk cannot be deleted in state \"" + disk.state + "\"");
  }
  // The saga's first step removes the record: from now on GET says 404.
  model.erase_disk(disk.id);
  services.guest.disk_deleted(disk.id);
  RespondAfterDeleteSaga(services, call, {"disk", disk.id, disk.name});
  return ApiStatus::Ok();
}

}  // namespace

void RegisterDiskHandlers(std::map<std::string, ApiHandler>& table) {
  table["disk_list"] = &CatchModelErrors<&disk_list>;
  table["disk_create"] = &CatchModelErrors<&disk_create>;
  table["disk_view"] = &CatchModelErrors<&disk_view>;
  table["disk_delete"] = &CatchModelErrors<&disk_delete>;
}

}  // namespace oxide_sim
