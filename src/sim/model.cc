#include "model.h"

#include "api_error.h"

namespace oxide_sim {
namespace {

template <typename Map>
auto* find_named(Map& objects, const std::string& project_id, const std::string& name) {
  for (auto& [id, object] : objects) {
    if (object.project_id == project_id && object.name == name) return &object;
  }
  return static_cast<typename Map::mapped_type*>(nullptr);
}

template <typename Map>
auto* find_id(Map& objects, const std::string& id) {
  auto it = objects.find(id);
  return it == objects.end() ? nullptr : &it->second;
}

// The shared selector logic: ID alone, or name within a project.
template <typename T>
T& select(Model& model, T* (Model::*by_id)(const std::string&),
          T* (Model::*by_name)(const std::string&, const std::string&), const char* type,
          const NameOrId& selector, const std::optional<NameOrId>& project,
          const std::string& id_with_project, const std::string& name_without_project) {
  if (selector.is_id) {
    if (project) throw invalid_request(id_with_project);
    T* found = (model.*by_id)(selector.value);
    if (found == nullptr) throw object_not_found(type, false, selector.value);
    return *found;
  }
  if (!project) throw invalid_request(name_without_project);
  Project& owner = model.select_project(*project);
  T* found = (model.*by_name)(owner.id, selector.value);
  if (found == nullptr) throw object_not_found(type, true, selector.value);
  return *found;
}

}  // namespace

Project* Model::project_by(const NameOrId& selector) {
  if (selector.is_id) return find_id(projects, selector.value);
  for (auto& [id, project] : projects) {
    if (project.name == selector.value) return &project;
  }
  return nullptr;
}

Disk* Model::disk_named(const std::string& project_id, const std::string& name) {
  return find_named(disks, project_id, name);
}
Snapshot* Model::snapshot_named(const std::string& project_id, const std::string& name) {
  return find_named(snapshots, project_id, name);
}
Instance* Model::instance_named(const std::string& project_id, const std::string& name) {
  return find_named(instances, project_id, name);
}
Disk* Model::disk(const std::string& id) {
  return find_id(disks, id);
}
Snapshot* Model::snapshot(const std::string& id) {
  return find_id(snapshots, id);
}
Instance* Model::instance(const std::string& id) {
  return find_id(instances, id);
}

Project& Model::select_project(const NameOrId& selector) {
  Project* project = project_by(selector);
  if (project == nullptr) throw object_not_found("project", !selector.is_id, selector.value);
  return *project;
}

Disk& Model::select_disk(const NameOrId& disk, const std::optional<NameOrId>& project) {
  return select<Disk>(*this, &Model::disk, &Model::disk_named, "disk", disk, project,
                      "when providing disk as an ID project should not be specified",
                      "disk should either be UUID or project should be specified");
}

Snapshot& Model::select_snapshot(const NameOrId& snapshot, const std::optional<NameOrId>& project) {
  return select<Snapshot>(*this, &Model::snapshot, &Model::snapshot_named, "snapshot", snapshot,
                          project,
                          "when providing snapshot as an ID, project should not be specified",
                          "snapshot should either be an ID or project should be specified");
}

Instance& Model::select_instance(const NameOrId& instance, const std::optional<NameOrId>& project) {
  return select<Instance>(*this, &Model::instance, &Model::instance_named, "instance", instance,
                          project,
                          "when providing instance as an ID project should not be specified",
                          "instance should either be UUID or project should be specified");
}

void Model::put(const Project& project) {
  projects[project.id] = project;
  store_.put("project", project.id, to_record(project).dump());
}
void Model::put(const Disk& disk) {
  disks[disk.id] = disk;
  store_.put("disk", disk.id, to_record(disk).dump());
}
void Model::put(const Snapshot& snapshot) {
  snapshots[snapshot.id] = snapshot;
  store_.put("snapshot", snapshot.id, to_record(snapshot).dump());
}
void Model::put(const Instance& instance) {
  instances[instance.id] = instance;
  store_.put("instance", instance.id, to_record(instance).dump());
}
void Model::erase_project(const std::string& id) {
  projects.erase(id);
  store_.erase("project", id);
}
void Model::erase_disk(const std::string& id) {
  disks.erase(id);
  store_.erase("disk", id);
}
void Model::erase_snapshot(const std::string& id) {
  snapshots.erase(id);
  store_.erase("snapshot", id);
}
void Model::erase_instance(const std::string& id) {
  instances.erase(id);
  store_.erase("instance", id);
}

void Model::save_quota() {
  nlohmann::json value = {
      {"cpus", quota.cpus}, {"memory", quota.memory}, {"storage", quota.storage}};
  store_.put_setting("quota", value.dump());
}

void Model::save_frozen() {
  store_.put_setting("frozen", nlohmann::json(frozen).dump());
}

bool Model::is_frozen(const std::string& kind, const std::string& id,
                      const std::string& name) const {
  return frozen.count(kind + ":" + id) > 0 || frozen.count(kind + ":" + name) > 0;
}

uint64_t Model::provisioned_storage() const {
  uint64_t total = 0;
  for (const auto& [id, disk] : disks)
    total += disk.size;
  for (const auto& [id, snapshot] : snapshots)
    total += snapshot.size;
  return total;
}

int64_t Model::provisioned_cpus() const {
  int64_t total = 0;
  for (const auto& [id, instance] : instances) {
    if (instance_has_vmm(instance.run_state)) total += instance.ncpus;
  }
  return total;
}

uint64_t Model::provisioned_memory() const {
  uint64_t total = 0;
  for (const auto& [id, instance] : instances) {
    if (instance_has_vmm(instance.run_state)) total += instance.memory;
  }
  return total;
}

std::vector<const Disk*> Model::disks_attached_to(const std::string& instance_id) const {
  std::vector<const Disk*> out;
  for (const auto& [id, disk] : disks) {
    if (disk_state_has_instance(disk.state) && disk.instance_id == instance_id)
      out.push_back(&disk);
  }
  return out;
}

bool Model::load(std::string* error) {
  if (!store_.is_open()) return true;
  try {
    for (const auto& [kind, rows] : store_.load_objects()) {
      for (const auto& [id, body] : rows) {
        const nlohmann::json record = nlohmann::json::parse(body);
        if (kind == "project") from_record(record, &projects[id]);
        if (kind == "disk") from_record(record, &disks[id]);
        if (kind == "snapshot") from_record(record, &snapshots[id]);
        if (kind == "instance") from_record(record, &instances[id]);
      }
    }
    const auto settings = store_.load_settings();
    if (auto it = settings.find("quota"); it != settings.end()) {
      const auto value = nlohmann::json::parse(it->second);
      quota.cpus = value.at("cpus");
      quota.memory = value.at("memory");
      quota.storage = value.at("storage");
    }
    if (auto it = settings.find("frozen"); it != settings.end()) {
      frozen = nlohmann::json::parse(it->second).get<std::set<std::string>>();
    }
  } catch (const nlohmann::json::exception& problem) {
    *error = std::string("state database holds a malformed record: ") + problem.what();
    return false;
  }
  return true;
}

}  // namespace oxide_sim
