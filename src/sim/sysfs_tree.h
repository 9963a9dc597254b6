// Writes and removes the sysfs-like tree the node service scans (see README "Guest device
// contract"): <root>/block/<loop>/{dev,size,queue/logical_block_size,device/serial,
// device/model} and <root>/class/nvme/nvme<N>/{serial,model}. Event-loop thread only.
#pragma once

#include <cstdint>
#include <string>

#include "loop_device.h"

namespace oxide_sim {

// The serial a Linux guest prints: the first 20 bytes of the disk name, cut at the first NUL.
std::string guest_serial(const std::string& disk_name);

class SysfsTree {
 public:
  explicit SysfsTree(std::string root) : root_(std::move(root)) {}
  const std::string& root() const { return root_; }

  // Creates the root and empties block/ and class/nvme/ (left over from a killed run).
  bool prepare(std::string* error);
  // Publishes a device; block/<loop> appears atomically (written aside, then renamed).
  bool add(const LoopDevice& device, uint64_t size_bytes, uint32_t block_size,
           const std::string& serial, int nvme_index, std::string* error);
  void remove(const LoopDevice& device, int nvme_index);

 private:
  std::string root_;
};

}  // namespace oxide_sim
