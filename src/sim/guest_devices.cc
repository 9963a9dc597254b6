#include "guest_devices.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "backing_files.h"

namespace oxide_sim {
namespace fs = std::filesystem;
namespace {

void log_problem(const std::string& text) {
  std::fprintf(stderr, "oxide-sim: guest devices: %s\n", text.c_str());
}

}  // namespace

bool GuestDevices::start(const Options& options, std::string* error) {
  if (options.backing_dir.empty()) return true;
  if (::geteuid() != 0) {
    *error =
        "guest device emulation (--guest-backing-dir) needs root: it creates loop devices. "
        "Run oxide-sim as root, or leave out --guest-backing-dir and --guest-sysfs-root.";
    return false;
  }
  std::error_code code;
  fs::create_directories(options.backing_dir, code);
  if (code) {
    *error = "cannot create guest backing dir " + options.backing_dir + ": " + code.message();
    return false;
  }
  backing_dir_ = fs::canonical(options.backing_dir, code).string();
  const std::string root =
      options.sysfs_root.empty() ? backing_dir_ + "/sysfs" : options.sysfs_root;
  for (const std::string& stale : loop_devices_backed_in(backing_dir_)) {
    std::string problem;
    if (!detach_loop_device(stale, &problem)) log_problem(problem);
  }
  SysfsTree tree(root);
  if (!tree.prepare(error)) return false;
  tree_ = std::move(tree);
  return true;
}

std::string GuestDevices::disk_file(const std::string& disk_id) const {
  return backing_dir_ + "/" + disk_id + ".img";
}

std::string GuestDevices::snapshot_file(const std::string& snapshot_id) const {
  return backing_dir_ + "/snapshot-" + snapshot_id + ".img";
}

void GuestDevices::disk_created(const Disk& disk,
                                const std::optional<std::string>& from_snapshot_id) {
  if (!enabled()) return;
  std::string problem;
  bool ok = false;
  if (from_snapshot_id && fs::exists(snapshot_file(*from_snapshot_id))) {
    ok =
        copy_sparse_file(snapshot_file(*from_snapshot_id), disk_file(disk.id), disk.size, &problem);
  } else {
    ok = create_sparse_file(disk_file(disk.id), disk.size, &problem);
  }
  if (!ok) log_problem(problem);
}

void GuestDevices::disk_deleted(const std::string& disk_id) {
  if (!enabled()) return;
  hide(disk_id);
  remove_file(disk_file(disk_id));
}

bool GuestDevices::snapshot_taken(const Snapshot& snapshot, const Disk& source) {
  if (!enabled()) return true;
  auto it = visible_.find(source.id);
  if (it != visible_.end()) flush_block_device(it->second.device.path());
  std::string problem;
  if (!copy_sparse_file(disk_file(source.id), snapshot_file(snapshot.id), snapshot.size,
                        &problem)) {
    log_problem(problem);
    return false;
  }
  return true;
}

void GuestDevices::snapshot_deleted(const std::string& snapshot_id) {
  if (!enabled()) return;
  remove_file(snapshot_file(snapshot_id));
}

void GuestDevices::repair_files(const Model& model) {
  if (!enabled()) return;
  std::set<std::string> wanted;
  for (const auto& [id, disk] : model.disks) {
    wanted.insert(disk_file(id));
    if (!fs::exists(disk_file(id))) disk_created(disk, std::nullopt);
  }
  for (const auto& [id, snapshot] : model.snapshots)
    wanted.insert(snapshot_file(id));
  std::error_code code;
  for (const auto& entry : fs::directory_iterator(backing_dir_, code)) {
    const std::string path = entry.path().string();
    if (entry.path().extension() == ".img" && wanted.count(path) == 0) remove_file(path);
  }
}

void GuestDevices::reconcile(const Model& model) {
  if (!enabled()) return;
  std::set<std::string> desired;
  for (const auto& [id, disk] : model.disks) {
    if (disk.state != "attached") continue;
    auto owner = model.instances.find(disk.instance_id);
    if (owner == model.instances.end()) continue;
    if (owner->second.guest_local && owner->second.run_state == "running") desired.insert(id);
  }
  std::vector<std::string> gone;
  for (const auto& [id, visible] : visible_) {
    if (desired.count(id) == 0) gone.push_back(id);
  }
  for (const auto& id : gone)
    hide(id);
  for (const auto& id : desired) {
    if (visible_.count(id) > 0) continue;
    const Disk& disk = model.disks.at(id);
    std::string problem;
    if (!fs::exists(disk_file(id))) disk_created(disk, std::nullopt);
    auto device = attach_loop_device(disk_file(id), disk.block_size, &problem);
    if (!device) {
      log_problem("cannot attach disk " + disk.name + ": " + problem);
      continue;
    }
    const int index = next_nvme_index_++;
    if (!tree_->add(*device, disk.size, disk.block_size, guest_serial(disk.name), index,
                    &problem)) {
      log_problem(problem);
      detach_loop_device(device->name, &problem);
      continue;
    }
    visible_[id] = Visible{*device, index};
  }
}

void GuestDevices::hide(const std::string& disk_id) {
  auto it = visible_.find(disk_id);
  if (it == visible_.end()) return;
  tree_->remove(it->second.device, it->second.nvme_index);
  flush_block_device(it->second.device.path());
  std::string problem;
  if (!detach_loop_device(it->second.device.name, &problem)) log_problem(problem);
  visible_.erase(it);
}

void GuestDevices::shutdown() {
  while (!visible_.empty())
    hide(visible_.begin()->first);
}

}  // namespace oxide_sim
