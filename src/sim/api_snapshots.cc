// GET/POST /v1/snapshots, GET/DELETE /v1/snapshots/{snapshot} (README §8).
#include "api_handlers.h"
#include "clock.h"
#include "disk_rules.h"
#include "guest_devices.h"
#include "ids.h"
#include "pagination.h"

namespace oxide_sim {
namespace {

std::string camel_case(const std::string& snake) {
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

void snapshot_list(Services& services, const CallPtr& call) {
  PageRequest page = parse_page_request(*call, true);
  authenticate(services, *call);
  const Project& project = services.model.select_project(*page.project);
  std::vector<PageEntry> entries;
  for (const auto& [id, snapshot] : services.model.snapshots) {
    if (snapshot.project_id == project.id) {
      entries.push_back({snapshot.name, snapshot.id, to_api_json(snapshot)});
    }
  }
  call->respond_json(200, build_page(std::move(entries), page));
}

const Disk& source_disk(Model& model, const Project& project, const NameOrId& selector) {
  if (!selector.is_id) {
    const Disk* disk = model.disk_named(project.id, selector.value);
    if (disk == nullptr) throw object_not_found("disk", true, selector.value);
    return *disk;
  }
  const Disk* disk = model.disk(selector.value);
  if (disk == nullptr) throw object_not_found("disk", false, selector.value);
  if (disk->project_id != project.id) {
    throw invalid_request("can't create a snapshot of a disk in a different project");
  }
  return *disk;
}

// Ends the snapshot saga: copy the data, mark ready, give the disk back.
void finish_snapshot(Services& services, const CallPtr& call, const std::string& snapshot_id,
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
    if (answer) call->respond_error(internal_error());
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
  if (answer) call->respond_json(201, to_api_json(*snapshot));
}

void snapshot_create(Services& services, const CallPtr& call) {
  const NameOrId project_selector = required_query_project(*call);
  const nlohmann::json body = body_json(*call);
  std::string name, description;
  NameOrId disk_selector;
  try {
    ObjectReader reader(body, "SnapshotCreate");
    name = reader.name("name");
    description = reader.description("description");
    disk_selector = reader.name_or_id("disk");
    reader.finish();
  } catch (const BodyError& problem) {
    throw bad_json_body(problem.what());
  }
  authenticate(services, *call);
  Model& model = services.model;
  const Project& project = model.select_project(project_selector);
  Disk disk = source_disk(model, project, disk_selector);
  if (disk.disk_type == "local") {
    throw invalid_request("can't create a snapshot of a local storage disk");
  }
  if (disk.read_only) throw invalid_request("can't create a snapshot of a read-only disk");
  const Instance* owner = disk.state == "attached" ? model.instance(disk.instance_id) : nullptr;
  const bool vmm_path = owner != nullptr && instance_has_vmm(owner->run_state);
  if (vmm_path) {
    for (const auto& [id, other] : model.snapshots) {
      if (other.disk_id == disk.id && other.state == "creating") {
        throw conflict("volume repair lock");
      }
    }
  } else if (disk.state != "detached" && disk.state != "attached") {
    throw service_unavailable();
  }
  check_storage_quota(model, disk.size);
  if (model.snapshot_named(project.id, name) != nullptr) throw already_exists("snapshot", name);

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
  if (async) call->respond_json(201, to_api_json(snapshot));
  const std::string id = snapshot.id;
  services.timeline.run(
      model.timing.create_delay_ms, {"snapshot", id, name},
      [&services, call, id, async]() { finish_snapshot(services, call, id, !async); });
}

void snapshot_view(Services& services, const CallPtr& call) {
  const NameOrId selector = path_name_or_id(*call, "snapshot");
  const auto project = query_name_or_id(*call, "project");
  authenticate(services, *call);
  call->respond_json(200, to_api_json(services.model.select_snapshot(selector, project)));
}

void snapshot_delete(Services& services, const CallPtr& call) {
  const NameOrId selector = path_name_or_id(*call, "snapshot");
  const auto project = query_name_or_id(*call, "project");
  authenticate(services, *call);
  Model& model = services.model;
  const Snapshot snapshot = model.select_snapshot(selector, project);
  if (snapshot.state != "ready" && snapshot.state != "faulted") {
    throw invalid_request("snapshot cannot be deleted in state " + camel_case(snapshot.state));
  }
  model.erase_snapshot(snapshot.id);
  services.guest.snapshot_deleted(snapshot.id);
  respond_after_delete_saga(services, call, {"snapshot", snapshot.id, snapshot.name});
}

}  // namespace

void register_snapshot_handlers(std::map<std::string, ApiHandler>& table) {
  table["snapshot_list"] = &snapshot_list;
  table["snapshot_create"] = &snapshot_create;
  table["snapshot_view"] = &snapshot_view;
  table["snapshot_delete"] = &snapshot_delete;
}

}  // namespace oxide_sim
