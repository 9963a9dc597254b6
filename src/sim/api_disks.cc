// GET/POST /v1/disks, GET/DELETE /v1/disks/{disk} (README §7).
#include "api_handlers.h"
#include "clock.h"
#include "disk_rules.h"
#include "guest_devices.h"
#include "pagination.h"

namespace oxide_sim {
namespace {

void disk_list(Services& services, const CallPtr& call) {
  PageRequest page = parse_page_request(*call, true);
  authenticate(services, *call);
  const Project& project = services.model.select_project(*page.project);
  std::vector<PageEntry> entries;
  for (const auto& [id, disk] : services.model.disks) {
    if (disk.project_id == project.id) entries.push_back({disk.name, disk.id, to_api_json(disk)});
  }
  call->respond_json(200, build_page(std::move(entries), page));
}

void disk_create(Services& services, const CallPtr& call) {
  const NameOrId project_selector = required_query_project(*call);
  const nlohmann::json body = body_json(*call);
  DiskCreateParams params;
  try {
    ObjectReader reader(body, "DiskCreate");
    params = read_disk_create(reader);
    reader.finish();
  } catch (const BodyError& problem) {
    throw bad_json_body(problem.what());
  }
  authenticate(services, *call);
  Model& model = services.model;
  const Project& project = model.select_project(project_selector);
  const Disk disk = plan_new_disk(model, project, params);
  model.put(disk);
  services.guest.disk_created(disk, disk.snapshot_id);
  const nlohmann::ordered_json created = to_api_json(disk);
  if (disk.state != "creating") {
    call->respond_json(201, created);
    return;
  }
  const bool async = model.timing.async_mode;
  if (async) call->respond_json(201, created);
  const std::string id = disk.id;
  const std::string final_state = params.source == "importing_blocks" ? "import_ready" : "detached";
  services.timeline.run(model.timing.create_delay_ms, {"disk", disk.id, disk.name},
                        [&services, call, id, created, async, final_state]() {
                          Disk* current = services.model.disk(id);
                          if (current == nullptr || current->state == "faulted") {
                            if (!async) call->respond_error(internal_error());
                            return;
                          }
                          if (current->state != "creating") {  // attached meanwhile
                            if (!async) call->respond_json(201, created);
                            return;
                          }
                          current->state = final_state;
                          current->time_modified = now_rfc3339();
                          services.model.put(*current);
                          if (!async) call->respond_json(201, created);
                        });
}

void disk_view(Services& services, const CallPtr& call) {
  const NameOrId selector = path_name_or_id(*call, "disk");
  const auto project = query_name_or_id(*call, "project");
  authenticate(services, *call);
  call->respond_json(200, to_api_json(services.model.select_disk(selector, project)));
}

void disk_delete(Services& services, const CallPtr& call) {
  const NameOrId selector = path_name_or_id(*call, "disk");
  const auto project = query_name_or_id(*call, "project");
  authenticate(services, *call);
  Model& model = services.model;
  const Disk disk = model.select_disk(selector, project);
  if (disk.state != "detached" && disk.state != "faulted") {
    throw invalid_request("disk cannot be deleted in state \"" + disk.state + "\"");
  }
  // The saga's first step removes the record: from now on GET says 404.
  model.erase_disk(disk.id);
  services.guest.disk_deleted(disk.id);
  respond_after_delete_saga(services, call, {"disk", disk.id, disk.name});
}

}  // namespace

void register_disk_handlers(std::map<std::string, ApiHandler>& table) {
  table["disk_list"] = &disk_list;
  table["disk_create"] = &disk_create;
  table["disk_view"] = &disk_view;
  table["disk_delete"] = &disk_delete;
}

}  // namespace oxide_sim
