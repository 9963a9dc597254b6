// Typed Oxide API objects (docs/oxide-api/README.md §5) and request parameters, as the client
// hands them to its callers. Only the fields the plugin uses are kept. Plain values: any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/oxide_states.h"

namespace oxide::backend {

// Disk.disk_type and DiskCreate.disk_type: Crucible (replicated across sleds) or sled-local NVMe.
inline constexpr const char* kDiskTypeDistributed = "distributed";
inline constexpr const char* kDiskTypeLocal = "local";

struct DiskState {
  DiskStatus status = DiskStatus::kUnknown;
  std::string instance;  // the instance id when HoldsInstance(status); else empty
};

struct Disk {
  std::string id, name, description, project_id;
  std::optional<std::string> snapshot_id, image_id;
  uint64_t size = 0;
  uint64_t block_size = 0;
  DiskState state;
  std::string disk_type;  // kDiskTypeDistributed or kDiskTypeLocal
  bool read_only = false;
  std::string time_created, time_modified;
};

struct Snapshot {
  std::string id, name, description, project_id, disk_id;
  uint64_t size = 0;
  SnapshotStatus state = SnapshotStatus::kUnknown;
  std::string time_created, time_modified;
};

struct Project {
  std::string id, name, description;
};

struct Instance {
  std::string id, name, description, project_id, hostname;
  uint64_t ncpus = 0, memory = 0;
  std::string run_state;  // "running", "stopped", ...
  std::optional<std::string> boot_disk_id;
  std::string time_run_state_updated, time_created, time_modified;
};

struct ResourceCounts {
  uint64_t cpus = 0, memory = 0, storage = 0;
};

struct Utilization {
  ResourceCounts capacity;     // the silo's quotas
  ResourceCounts provisioned;  // what is in use (disks + snapshots for storage)
};

struct CurrentUser {
  std::string id, display_name, silo_id, silo_name;
  bool silo_admin = false, fleet_viewer = false;
};

template <typename T>
struct Page {
  std::vector<T> items;
  std::optional<std::string> next_page;  // set whenever items is non-empty (README §4)
};

enum class SortBy { kNameAscending, kNameDescending, kIdAscending };

struct PageRequest {
  uint32_t limit = 100;    // the server clamps to 10000; 0 is rejected, so it is sent as 1+
  std::string page_token;  // empty = first page
  SortBy sort_by = SortBy::kNameAscending;
};

struct DiskCreate {
  std::string name, description;
  uint64_t size = 0;
  uint64_t block_size = 4096;  // blank distributed disks only (a local disk's is always 4096)
  std::string snapshot_id;     // set: the disk is created from this snapshot (distributed only)
  std::string disk_type = kDiskTypeDistributed;  // kDiskTypeLocal: {"type":"local"}, no source
};

struct SnapshotCreate {
  std::string name, description;
  std::string disk;  // name (in the project) or id
};

}  // namespace oxide::backend
