// The simulator's whole state: objects, quota, timing settings and frozen marks, with
// lookups that fail with Oxide's exact errors and mutations that write through to SQLite.
// Event-loop thread only (no locks: the loop thread owns it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "names.h"
#include "persistence.h"
#include "resources.h"

namespace oxide_sim {

struct TimingSettings {
  uint64_t create_delay_ms = 0;    // disk/snapshot create sagas
  uint64_t delete_delay_ms = 0;    // disk/snapshot delete sagas
  uint64_t instance_delay_ms = 0;  // starting->running, stopping->stopped, creating->...
  bool async_mode = false;         // answer creates at once, finish after the delay
  bool hotplug = false;            // allow attach/detach while the instance has a VMM
};

class Model {
 public:
  explicit Model(Persistence& store) : store_(store) {}

  std::map<std::string, Project> projects;  // by id
  std::map<std::string, Disk> disks;
  std::map<std::string, Snapshot> snapshots;
  std::map<std::string, Instance> instances;
  Quota quota;
  TimingSettings timing;
  // The largest physical disk of any sled: a local disk must fit on one (0: no limit but the
  // 10 PiB rule). Set through PUT /__sim/config; not persisted, cleared by reset.
  uint64_t physical_disk_bytes = 0;

  // Lookups; nullptr when absent.
  Project* project_by(const NameOrId& selector);
  Disk* disk_named(const std::string& project_id, const std::string& name);
  Snapshot* snapshot_named(const std::string& project_id, const std::string& name);
  Instance* instance_named(const std::string& project_id, const std::string& name);
  Disk* disk(const std::string& id);
  Snapshot* snapshot(const std::string& id);
  Instance* instance(const std::string& id);

  // Selector rules of README §3; throw ApiError (400 InvalidRequest / 404).
  Project& select_project(const NameOrId& selector);
  Disk& select_disk(const NameOrId& disk, const std::optional<NameOrId>& project);
  Snapshot& select_snapshot(const NameOrId& snapshot, const std::optional<NameOrId>& project);
  Instance& select_instance(const NameOrId& instance, const std::optional<NameOrId>& project);

  // Write-through mutations.
  void put(const Project& project);
  void put(const Disk& disk);
  void put(const Snapshot& snapshot);
  void put(const Instance& instance);
  void erase_project(const std::string& id);
  void erase_disk(const std::string& id);
  void erase_snapshot(const std::string& id);
  void erase_instance(const std::string& id);
  void save_quota();
  Persistence& store() { return store_; }

  // Accounting for /v1/utilization.
  uint64_t provisioned_storage() const;
  int64_t provisioned_cpus() const;
  uint64_t provisioned_memory() const;
  std::vector<const Disk*> disks_attached_to(const std::string& instance_id) const;

  // Freeze marks: "kind:id" or "kind:name" entries (kind = disk|snapshot|instance).
  std::set<std::string> frozen;
  bool is_frozen(const std::string& kind, const std::string& id, const std::string& name) const;
  void save_frozen();

  // Loads everything from the store (when open). Returns false with *error on bad data.
  bool load(std::string* error);

 private:
  Persistence& store_;
};

}  // namespace oxide_sim
