// The simulated Oxide objects (projects, disks, snapshots, instances) and their JSON forms:
// the API view (exact field names of nexus-subset.json) and the persisted record.
// Plain values; any thread, but the live copies belong to the event-loop thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace oxide_sim {

constexpr uint64_t kGiB = 1024ULL * 1024 * 1024;

struct Project {
  std::string id, name, description, time_created, time_modified;
};

struct Disk {
  std::string id, name, description, project_id;
  std::optional<std::string> snapshot_id, image_id;
  uint64_t size = 0;
  uint32_t block_size = 4096;
  std::string state = "creating";  // DiskState tag, snake_case
  std::string instance_id;         // set in attaching/attached/detaching
  std::string disk_type = "distributed";
  bool read_only = false;
  std::string time_created, time_modified;
};

struct Snapshot {
  std::string id, name, description, project_id, disk_id;
  uint64_t size = 0;
  uint32_t block_size = 4096;  // stored, not shown
  std::string state = "creating";
  std::string time_created, time_modified;
};

struct Instance {
  std::string id, name, description, project_id, hostname;
  uint32_t ncpus = 1;
  uint64_t memory = kGiB;
  std::string run_state = "stopped";
  std::string time_run_state_updated;
  std::optional<std::string> boot_disk_id;
  std::optional<std::string> auto_restart_policy, cpu_platform;
  bool enable_jumbo_frames = false;
  std::string time_created, time_modified;
  bool guest_local = false;  // simulator-only: this machine is the instance's guest
  // Simulator-only: where this guest's disks appear (absolute path; empty: the default tree).
  std::string guest_sysfs_root;
  // Simulator-only: disk names that get their loop devices first, in this order, at a start.
  std::vector<std::string> guest_device_order;
};

struct Quota {
  int64_t cpus = 256;
  uint64_t memory = 1099511627776ULL;    // 1 TiB
  uint64_t storage = 10995116277760ULL;  // 10 TiB
};

bool disk_state_has_instance(const std::string& state);
// Run states in which the instance has an active VMM.
bool instance_has_vmm(const std::string& run_state);

nlohmann::ordered_json to_api_json(const Project& project);
nlohmann::ordered_json to_api_json(const Disk& disk);
nlohmann::ordered_json to_api_json(const Snapshot& snapshot);
nlohmann::ordered_json to_api_json(const Instance& instance);

// Persisted records: the API view plus simulator-only fields. from_record throws
// nlohmann::json::exception on a malformed record.
nlohmann::json to_record(const Project& project);
nlohmann::json to_record(const Disk& disk);
nlohmann::json to_record(const Snapshot& snapshot);
nlohmann::json to_record(const Instance& instance);
void from_record(const nlohmann::json& record, Project* out);
void from_record(const nlohmann::json& record, Disk* out);
void from_record(const nlohmann::json& record, Snapshot* out);
void from_record(const nlohmann::json& record, Instance* out);

}  // namespace oxide_sim
