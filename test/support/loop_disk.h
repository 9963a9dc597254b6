// Test support: a real loop device on a sparse file, shown in a fake sysfs tree with an NVMe
// serial (<root>/block/<loopN>/{dev,device/serial}) the way the plugin expects a guest disk.
// Detached in the destructor, also when the test failed. Test thread only; needs root.
#pragma once

#include <string>
#include <vector>

namespace oxide::testing {

class LoopDisk {
 public:
  // Creates `image` (sparse, `size_mib` MiB), attaches it, waits until udev (where it runs) has
  // handled the new device and nothing holds it, and, when `serial` is not empty, adds it under
  // `sysfs_root`. Check ok() afterwards.
  LoopDisk(const std::string& image, const std::string& sysfs_root, const std::string& serial,
           int size_mib = 512);
  ~LoopDisk();
  LoopDisk(const LoopDisk&) = delete;
  LoopDisk& operator=(const LoopDisk&) = delete;

  bool ok() const { return !node_.empty() && settled_; }
  const std::string& node() const { return node_; }  // /dev/loopN
  std::string name() const { return node_.substr(5); }
  // Adds (or re-adds) / removes the fake sysfs entry.
  void Show(const std::string& serial) const;
  void Hide() const;

 private:
  std::string image_;
  std::string sysfs_root_;
  std::string node_;
  bool settled_ = false;  // nothing held the device when it was handed over
};

// Runs a shell command; returns its exit code (stdout/stderr go to `output` when given).
int Shell(const std::string& command, std::string* output = nullptr);

// Mount points under `prefix` in /proc/self/mountinfo (decoded).
std::vector<std::string> MountsUnder(const std::string& prefix);

}  // namespace oxide::testing
