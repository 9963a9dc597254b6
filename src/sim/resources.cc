#include "resources.h"

namespace oxide_sim {
namespace {

nlohmann::json optional_json(const std::optional<std::string>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::optional<std::string> optional_field(const nlohmann::json& record, const char* key) {
  auto it = record.find(key);
  if (it == record.end() || it->is_null()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace

bool disk_state_has_instance(const std::string& state) {
  return state == "attaching" || state == "attached" || state == "detaching";
}

bool instance_has_vmm(const std::string& run_state) {
  return run_state == "starting" || run_state == "running" || run_state == "stopping" ||
         run_state == "rebooting" || run_state == "migrating" || run_state == "repairing";
}

nlohmann::ordered_json to_api_json(const Project& project) {
  nlohmann::ordered_json out;
  out["id"] = project.id;
  out["name"] = project.name;
  out["description"] = project.description;
  out["time_created"] = project.time_created;
  out["time_modified"] = project.time_modified;
  return out;
}

nlohmann::ordered_json to_api_json(const Disk& disk) {
  nlohmann::ordered_json state;
  state["state"] = disk.state;
  if (disk_state_has_instance(disk.state)) state["instance"] = disk.instance_id;
  nlohmann::ordered_json out;
  out["id"] = disk.id;
  out["name"] = disk.name;
  out["description"] = disk.description;
  out["project_id"] = disk.project_id;
  out["snapshot_id"] = optional_json(disk.snapshot_id);
  out["image_id"] = optional_json(disk.image_id);
  out["size"] = disk.size;
  out["block_size"] = disk.block_size;
  out["state"] = state;
  out["device_path"] = "/mnt/" + disk.name;
  out["disk_type"] = disk.disk_type;
  out["read_only"] = disk.read_only;
  out["time_created"] = disk.time_created;
  out["time_modified"] = disk.time_modified;
  return out;
}

nlohmann::ordered_json to_api_json(const Snapshot& snapshot) {
  nlohmann::ordered_json out;
  out["id"] = snapshot.id;
  out["name"] = snapshot.name;
  out["description"] = snapshot.description;
  out["project_id"] = snapshot.project_id;
  out["disk_id"] = snapshot.disk_id;
  out["size"] = snapshot.size;
  out["state"] = snapshot.state;
  out["time_created"] = snapshot.time_created;
  out["time_modified"] = snapshot.time_modified;
  return out;
}

nlohmann::ordered_json to_api_json(const Instance& instance) {
  nlohmann::ordered_json out;
  out["id"] = instance.id;
  out["name"] = instance.name;
  out["description"] = instance.description;
  out["project_id"] = instance.project_id;
  out["hostname"] = instance.hostname;
  out["ncpus"] = instance.ncpus;
  out["memory"] = instance.memory;
  out["run_state"] = instance.run_state;
  out["time_run_state_updated"] = instance.time_run_state_updated;
  out["boot_disk_id"] = optional_json(instance.boot_disk_id);
  out["auto_restart_enabled"] = instance.auto_restart_policy.value_or("best_effort") != "never";
  out["auto_restart_policy"] = optional_json(instance.auto_restart_policy);
  out["auto_restart_cooldown_expiration"] = nullptr;
  out["time_last_auto_restarted"] = nullptr;
  out["cpu_platform"] = optional_json(instance.cpu_platform);
  out["enable_jumbo_frames"] = instance.enable_jumbo_frames;
  out["time_created"] = instance.time_created;
  out["time_modified"] = instance.time_modified;
  return out;
}

nlohmann::json to_record(const Project& project) {
  return to_api_json(project);
}

nlohmann::json to_record(const Disk& disk) {
  return to_api_json(disk);
}

nlohmann::json to_record(const Snapshot& snapshot) {
  nlohmann::json out = to_api_json(snapshot);
  out["block_size"] = snapshot.block_size;
  return out;
}

nlohmann::json to_record(const Instance& instance) {
  nlohmann::json out = to_api_json(instance);
  out["guest_local"] = instance.guest_local;
  out["guest_sysfs_root"] = instance.guest_sysfs_root;
  out["guest_device_order"] = instance.guest_device_order;
  return out;
}

void from_record(const nlohmann::json& record, Project* out) {
  out->id = record.at("id");
  out->name = record.at("name");
  out->description = record.at("description");
  out->time_created = record.at("time_created");
  out->time_modified = record.at("time_modified");
}

void from_record(const nlohmann::json& record, Disk* out) {
  out->id = record.at("id");
  out->name = record.at("name");
  out->description = record.at("description");
  out->project_id = record.at("project_id");
  out->snapshot_id = optional_field(record, "snapshot_id");
  out->image_id = optional_field(record, "image_id");
  out->size = record.at("size");
  out->block_size = record.at("block_size");
  out->state = record.at("state").at("state");
  out->instance_id = record.at("state").value("instance", "");
  out->disk_type = record.at("disk_type");
  out->read_only = record.at("read_only");
  out->time_created = record.at("time_created");
  out->time_modified = record.at("time_modified");
}

void from_record(const nlohmann::json& record, Snapshot* out) {
  out->id = record.at("id");
  out->name = record.at("name");
  out->description = record.at("description");
  out->project_id = record.at("project_id");
  out->disk_id = record.at("disk_id");
  out->size = record.at("size");
  out->block_size = record.value("block_size", 4096U);
  out->state = record.at("state");
  out->time_created = record.at("time_created");
  out->time_modified = record.at("time_modified");
}

void from_record(const nlohmann::json& record, Instance* out) {
  out->id = record.at("id");
  out->name = record.at("name");
  out->description = record.at("description");
  out->project_id = record.at("project_id");
  out->hostname = record.at("hostname");
  out->ncpus = record.at("ncpus");
  out->memory = record.at("memory");
  out->run_state = record.at("run_state");
  out->time_run_state_updated = record.at("time_run_state_updated");
  out->boot_disk_id = optional_field(record, "boot_disk_id");
  out->auto_restart_policy = optional_field(record, "auto_restart_policy");
  out->cpu_platform = optional_field(record, "cpu_platform");
  out->enable_jumbo_frames = record.at("enable_jumbo_frames");
  out->time_created = record.at("time_created");
  out->time_modified = record.at("time_modified");
  out->guest_local = record.value("guest_local", false);
  out->guest_sysfs_root = record.value("guest_sysfs_root", "");
  out->guest_device_order = record.value("guest_device_order", std::vector<std::string>{});
}

}  // namespace oxide_sim
