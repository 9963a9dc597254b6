// Guest device emulation: backing files for every disk and snapshot, and for disks the
// "guest_local" instances can see, a loop device plus a sysfs-like entry (in the default tree,
// or in the instance's own guest_sysfs_root). A starting guest gets its devices in a stable
// order (README "Guest device contract"). Disabled (all calls no-ops) unless
// --guest-backing-dir is given. Event-loop thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loop_device.h"
#include "model.h"
#include "sysfs_tree.h"

namespace oxide_sim {

class GuestDevices {
 public:
  struct Options {
    std::string backing_dir;  // empty: emulation off
    std::string sysfs_root;
  };
  GuestDevices() = default;
  ~GuestDevices() { shutdown(); }
  GuestDevices(const GuestDevices&) = delete;
  GuestDevices& operator=(const GuestDevices&) = delete;

  // Checks root, prepares directories, detaches loop devices left by a killed run.
  bool start(const Options& options, std::string* error);
  bool enabled() const { return enabled_; }
  // Prepares a guest_sysfs_root (created, emptied of stale entries) unless it is already in
  // use in this run. A no-op (true) when emulation is off.
  bool use_sysfs_root(const std::string& root, std::string* error);

  std::string disk_file(const std::string& disk_id) const;
  std::string snapshot_file(const std::string& snapshot_id) const;

  // Backing-file lifecycle. Failures are logged to stderr; the API call still succeeds.
  void disk_created(const Disk& disk, const std::optional<std::string>& from_snapshot_id);
  void disk_deleted(const std::string& disk_id);
  bool snapshot_taken(const Snapshot& snapshot, const Disk& source);
  void snapshot_deleted(const std::string& snapshot_id);
  // Makes sure every disk and ready snapshot has a backing file; drops files of gone objects.
  void repair_files(const Model& model);

  // Makes the visible set match the model: disks attached to a running guest_local instance.
  // An instance that stops gives its loop device names back in a list it gets first at its next
  // start; a starting instance's disks take devices in the order of guest_device_order, then
  // by name.
  void reconcile(const Model& model);
  // Detaches every loop device and removes every sysfs entry.
  void shutdown();
  size_t visible_count() const { return visible_.size(); }

 private:
  struct Visible {
    LoopDevice device;
    std::string root;         // key of trees_
    int nvme_index = 0;       // lowest free in its root when it appeared
    std::string instance_id;  // the guest that sees it
    uint64_t sequence = 0;    // order of appearance
  };
  // The tree of `instance` (its own root, or the default one), prepared on first use.
  SysfsTree* tree_for(const Instance& instance, std::string* key);
  // Gives `disk` a loop device and a sysfs entry in the instance's tree.
  void show(const Disk& disk, const Instance& instance, const LoopChoice& choice);
  void hide(const std::string& disk_id);
  // The instance's new disks in start order: guest_device_order first, then by name.
  std::vector<std::string> start_order(const Model& model, const Instance& instance,
                                       const std::vector<std::string>& disk_ids) const;

  bool enabled_ = false;
  std::string backing_dir_;
  std::string default_root_;                // key of the --guest-sysfs-root tree
  std::map<std::string, SysfsTree> trees_;  // by canonical root
  std::map<std::string, Visible> visible_;  // by disk id
  uint64_t next_sequence_ = 0;
  // Loop device names a stopped guest gave back, in their order of appearance, by instance id:
  // offered to its disks first at its next start, and avoided by everyone else meanwhile.
  std::map<std::string, std::vector<std::string>> released_;
  std::set<std::string> running_;  // guest_local instances running at the last reconcile
};

}  // namespace oxide_sim
