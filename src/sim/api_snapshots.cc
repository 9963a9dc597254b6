// GET/POST /v1/snapshots, GET/DELETE /v1/snapshots/{snapshot} (README §8).
#include "api_handlers.h"
#include "clock.h"
#include "disk_rules.h"
#include "guest_devices.h"
#include "ids.h"
#include "json_reader.h"
#include "model_errors.h"
#include "pagination.h"

namespace oxide_sim {
namespace {

std::string CamelCase(const std::string& snake) {
  std::string out;
  bool upper = true;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out.push_back(upper ? static_cast<char>(c - 'a' + 'A') : c);
    upper = false;
  }
  return out;
}

ApiStatus snapshot_list(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(PageRequest page, ParsePageRequest(*call, true));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  const Project& project = services.model.select_project(*page.project);
  std::vector<PageEntry> entries;
  for (const auto& [id, snapshot] : services.model.snapshots) {
    if (snapshot.project_id == project.id) {
      entries.push_back({snapshot.name, snapshot.id, to_api_json(snapshot)});
    }
  }
  call->RespondJson(200, BuildPage(std::move(entries), page));
  return ApiStatus::Ok();
}

ApiResult<const Disk*> SourceDisk(Model& model, const Project& project, const NameOrId& selector) {
  if (!selector.is_id) {
    const Disk* disk = model.disk_named(project.id, selector.value);
    if (disk == nullptr) return object_not_found("disk", true, selector.value);
    return disk;
  }
  const Disk* disk = model.disk(selector.value);
  if (disk == nullptr) return object_not_found("disk", false, selector.value);
  if (disk->project_id != project.id) {
    return invalid_request("can't create a snapshot of a disk in a different project");
  }
  return disk;
}

// Ends the snapshot saga: copy the data, mark ready, give the disk back.
void FinishSnapshot(Services& services, const CallPtr& call, const std::string& snapshot_id,
                    bool answer) {
  Model& model = services.model;
  Snapshot* snapshot = model.snapshot(snapshot_id);
  if (snapshot == nullptr || snapshot->state != "creating") {
    if (snapshot != nullptr) {
      if (Disk* disk = model.disk(snapshot->disk_id); disk && disk->state == "maintenance") {
        disk->state = "detached";
        model.put(*disk);
      }
    }
    if (answer) call->RespondError(internal_error());
    return;
  }
  WriteBatch batch(model.store());
  Disk* disk = model.disk(snapshot->disk_id);
  if (disk != nullptr) services.guest.snapshot_taken(*snapshot, *disk);
  snapshot->state = "ready";
  snapshot->time_modified = now_rfc3339();
  model.put(*snapshot);
  if (disk != nullptr && disk->state == "maintenance") {
    disk->state = "detached";
    disk->time_modified = snapshot->time_modified;
    model.put(*disk);
  }
  if (answer) call->RespondJson(201, to_api_json(*snapshot));
}

ApiStatus snapshot_create(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId project_selector, RequiredQueryProject(*call));
  SIM_ASSIGN_OR_RETURN(const nlohmann::json body, BodyJson(*call));
  SIM_ASSIGN_OR_RETURN(ObjectReader reader, BodyField(ObjectReader::Open(body, "SnapshotCreate")));
  SIM_ASSIGN_OR_RETURN(const std::string name, BodyField(reader.Name("name")));
  SIM_ASSIGN_OR_RETURN(const std::string description, BodyField(reader.Description("description")));
  SIM_ASSIGN_OR_RETURN(const NameOrId disk_selector, BodyField(reader.Selector("disk")));
  SIM_RETURN_IF_ERROR(BodyCheck(reader.Finish()));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  Model& model = services.model;
  const Project& project = model.select_project(project_selector);
  SIM_ASSIGN_OR_RETURN(const Disk* source, SourceDisk(model, project, disk_selector));
  Disk disk = *source;
  if (disk.disk_type == "local") {
    return invalid_request("can't create a snapshot of a local storage disk");
  }
  if (disk.read_only) return invalid_request("can't create a snapshot of a read-only disk");
  const Instance* owner = disk.state == "attached" ? model.instance(disk.instance_id) : nullptr;
  const bool vmm_path = owner != nullptr && instance_has_vmm(owner->run_state);
  if (vmm_path) {
    for (const auto& [id, other] : model.snapshots) {
      if (other.disk_id == disk.id && other.state == "creating") {
        return conflict("volume repair lock");
      }
    }
  } else if (disk.state != "detached" && disk.state != "attached") {
    return service_unavailable();
  }
  check_storage_quota(model, disk.size);
  if (model.snapshot_named(project.id, name) != nullptr) return already_exists("snapshot", name);

  Snapshot snapshot;
  snapshot.id = new_uuid();
  snapshot.name = name;
  snapshot.description = description;
  snapshot.project_id = project.id;
  snapshot.disk_id = disk.id;
  snapshot.size = disk.size;
  snapshot.block_size = disk.block_size;
  snapshot.state = "creating";
  snapshot.time_created = now_rfc3339();
  snapshot.time_modified = snapshot.time_created;
  {
    WriteBatch batch(model.store());
    model.put(snapshot);
    if (disk.state == "detached") {
      disk.state = "maintenance";
      model.put(disk);
    }
  }
  const bool async = model.timing.async_mode;
  if (async) call->RespondJson(201, to_api_json(snapshot));
  const std::string id = snapshot.id;
  services.timeline.Run(
      model.timing.create_delay_ms, {"snapshot", id, name},
      [&services, call, id, async]() { FinishSnapshot(services, call, id, !async); });
  return ApiStatus::Ok();
}

ApiStatus snapshot_view(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, PathNameOrId(*call, "snapshot"));
  SIM_ASSIGN_OR_RETURN(const std::optional<NameOrId> project, QueryNameOrId(*call, "project"));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  call->RespondJson(200, to_api_json(services.model.select_snapshot(selector, project)));
  return ApiStatus::Ok();
}

ApiStatus snapshot_delete(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId selector, PathNameOrId(*call, "snapshot"));
  SIM_ASSIGN_OR_RETURN(const std::optional<NameOrId> project, QueryNameOrId(*call, "project"));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  Model& model = services.model;
  const Snapshot snapshot = model.select_snapshot(selector, project);
  if (snapshot.state != "ready" && snapshot.state != "faulted") {
    return invalid_request("snapshot cannot be deleted in state " + CamelCase(snapshot.state));
  }
  model.erase_snapshot(snapshot.id);
  services.guest.snapshot_deleted(snapshot.id);
  RespondAfterDeleteSaga(services, call, {"snapshot", snapshot.id, snapshot.name});
  return ApiStatus::Ok();
}

}  // namespace

void RegisterSnapshotHandlers(std::map<std::string, ApiHandler>& table) {
  table["snapshot_list"] = &CatchModelErrors<&snapshot_list>;
  table["snapshot_create"] = &CatchModelErrors<&snapshot_create>;
  table["snapshot_view"] = &CatchModelErrors<&snapshot_view>;
  table["snapshot_delete"] = &CatchModelErrors<&snapshot_delete>;
}

}  // namespace oxide_sim
