#include "guest_devices.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <utility>

#include "backing_files.h"

namespace oxide_sim {
namespace fs = std::filesystem;
namespace {

void log_problem(const std::string& text) {
  std::fprintf(stderr, "oxide-sim: guest devices: %s\n", text.c_str());
}

// One spelling per directory, so that two names of one root share one tree.
std::string root_key(const std::string& root) {
  std::error_code ignored;
  std::string key = fs::weakly_canonical(fs::path(root).lexically_normal(), ignored).string();
  while (key.size() > 1 && key.back() == '/')
    key.pop_back();
  return key;
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
  default_root_ = root_key(root);
  trees_.emplace(default_root_, SysfsTree(default_root_));
  enabled_ = true;
  return true;
}

bool GuestDevices::use_sysfs_root(const std::string& root, std::string* error) {
  if (!enabled()) return true;
  const std::string key = root_key(root);
  if (trees_.count(key) > 0) return true;
  SysfsTree tree(key);
  if (!tree.prepare(error)) return false;
  trees_.emplace(key, std::move(tree));
  return true;
}

SysfsTree* GuestDevices::tree_for(const Instance& instance, std::string* key) {
  if (instance.guest_sysfs_root.empty()) {
    *key = default_root_;
  } else {
    std::string problem;
    if (!use_sysfs_root(instance.guest_sysfs_root, &problem)) {
      log_problem(problem);
      return nullptr;
    }
    *key = root_key(instance.guest_sysfs_root);
  }
  return &trees_.at(*key);
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
  std::set<std::string> running;
  for (const auto& [id, instance] : model.instances) {
    if (instance.guest_local && instance.run_state == "running") running.insert(id);
  }
  std::map<std::string, std::vector<std::string>> desired;  // disk ids by instance id
  std::set<std::string> desired_disks;
  for (const auto& [id, disk] : model.disks) {
    if (disk.state != "attached" || running.count(disk.instance_id) == 0) continue;
    desired[disk.instance_id].push_back(id);
    desired_disks.insert(id);
  }

  // Hide, in order of appearance, what is no longer seen. A guest that left "running" keeps
  // the names of its devices for its next start.
  std::vector<std::pair<uint64_t, std::string>> gone;
  for (const auto& [id, visible] : visible_) {
    if (desired_disks.count(id) == 0) gone.emplace_back(visible.sequence, id);
  }
  std::sort(gone.begin(), gone.end());
  for (const auto& [sequence, id] : gone) {
    const Visible& visible = visible_.at(id);
    if (running.count(visible.instance_id) == 0) {
      released_[visible.instance_id].push_back(visible.device.name);
    }
    hide(id);
  }
  for (auto it = released_.begin(); it != released_.end();) {
    auto owner = model.instances.find(it->first);
    const bool keep = owner != model.instances.end() && owner->second.guest_local;
    it = keep ? std::next(it) : released_.erase(it);
  }

  // Show what is new. A guest that has just started offers its old names to its disks in start
  // order; nobody else takes a name a stopped guest will want back.
  for (const auto& [instance_id, disk_ids] : desired) {
    const Instance& instance = model.instances.at(instance_id);
    std::vector<std::string> names;
    if (running_.count(instance_id) == 0) {
      auto own = released_.find(instance_id);
      if (own != released_.end()) {
        names = std::move(own->second);
        released_.erase(own);
      }
    }
    std::vector<std::string> fresh;
    for (const std::string& id : disk_ids) {
      if (visible_.count(id) == 0) fresh.push_back(id);
    }
    const std::vector<std::string> order = start_order(model, instance, fresh);
    for (size_t k = 0; k < order.size(); ++k) {
      LoopChoice choice;
      if (k < names.size()) choice.preferred = names[k];
      for (size_t later = k + 1; later < names.size(); ++later)
        choice.avoid.insert(names[later]);
      for (const auto& [other, reserved] : released_)
        choice.avoid.insert(reserved.begin(), reserved.end());
      show(model.disks.at(order[k]), instance, choice);
    }
  }
  for (const std::string& id : running) {
    if (running_.count(id) == 0) released_.erase(id);  // started without disks: names lapse
  }
  running_ = std::move(running);
}

std::vector<std::string> GuestDevices::start_order(const Model& model, const Instance& instance,
                                                   const std::vector<std::string>& disk_ids) const {
  std::vector<std::string> order;
  std::set<std::string> placed;
  for (const std::string& name : instance.guest_device_order) {
    for (const std::string& id : disk_ids) {
      if (model.disks.at(id).name == name && placed.insert(id).second) order.push_back(id);
    }
  }
  std::vector<std::string> rest;
  for (const std::string& id : disk_ids) {
    if (placed.count(id) == 0) rest.push_back(id);
  }
  std::sort(rest.begin(), rest.end(), [&model](const std::string& a, const std::string& b) {
    return model.disks.at(a).name < model.disks.at(b).name;
  });
  order.insert(order.end(), rest.begin(), rest.end());
  return order;
}

void GuestDevices::show(const Disk& disk, const Instance& instance, const LoopChoice& choice) {
  std::string root;
  SysfsTree* tree = tree_for(instance, &root);
  if (tree == nullptr) return;
  std::string problem;
  if (!fs::exists(disk_file(disk.id))) disk_created(disk, std::nullopt);
  auto device = attach_loop_device(disk_file(disk.id), disk.block_size, choice, &problem);
  if (!device) {
    log_problem("cannot attach disk " + disk.name + ": " + problem);
    return;
  }
  // As Linux numbers NVMe controllers: the lowest number not in use on this guest.
  std::set<int> used;
  for (const auto& [id, visible] : visible_) {
    if (visible.root == root) used.insert(visible.nvme_index);
  }
  int index = 0;
  while (used.count(index) > 0)
    ++index;
  if (!tree->add(*device, disk.size, disk.block_size, guest_serial(disk.name), index, &problem)) {
    log_problem(problem);
    detach_loop_device(device->name, &problem);
    return;
  }
  visible_[disk.id] = Visible{*device, root, index, instance.id, next_sequence_++};
}

void GuestDevices::hide(const std::string& disk_id) {
  auto it = visible_.find(disk_id);
  if (it == visible_.end()) return;
  trees_.at(it->second.root).remove(it->second.device, it->second.nvme_index);
  flush_block_device(it->second.device.path());
  std::string problem;
  if (!detach_loop_device(it->second.device.name, &problem)) log_problem(problem);
  visible_.erase(it);
}

void GuestDevices::shutdown() {
  while (!visible_.empty())
    hide(visible_.begin()->first);
  released_.clear();
  running_.clear();
}

}  // namespace oxide_sim
