// Guest device emulation: backing files for every disk and snapshot, and for disks the
// "guest_local" instance can see, a loop device plus a sysfs-like entry. Disabled (all
// calls no-ops) unless --guest-backing-dir is given. Event-loop thread only.
#pragma once

#include <map>
#include <optional>
#include <string>

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
  bool enabled() const { return tree_.has_value(); }

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
  void reconcile(const Model& model);
  // Detaches every loop device and removes every sysfs entry.
  void shutdown();
  size_t visible_count() const { return visible_.size(); }

 private:
  struct Visible {
    LoopDevice device;
    int nvme_index = 0;
  };
  void hide(const std::string& disk_id);

  std::string backing_dir_;
  std::optional<SysfsTree> tree_;
  std::map<std::string, Visible> visible_;  // by disk id
  int next_nvme_index_ = 0;
};

}  // namespace oxide_sim
