#include "sysfs_tree.h"

#include <filesystem>
#include <fstream>

namespace oxide_sim {
namespace fs = std::filesystem;
namespace {

bool write_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  return static_cast<bool>(out);
}

}  // namespace

std::string guest_serial(const std::string& disk_name) {
  std::string serial = disk_name.substr(0, std::min<size_t>(20, disk_name.size()));
  const size_t nul = serial.find('\0');
  if (nul != std::string::npos) serial.resize(nul);
  return serial;
}

bool SysfsTree::prepare(std::string* error) {
  std::error_code code;
  fs::create_directories(root_, code);
  fs::remove_all(fs::path(root_) / "block", code);
  fs::remove_all(fs::path(root_) / "class" / "nvme", code);
  fs::create_directories(fs::path(root_) / "block", code);
  fs::create_directories(fs::path(root_) / "class" / "nvme", code);
  if (code) {
    *error = "cannot prepare guest sysfs root " + root_ + ": " + code.message();
    return false;
  }
  return true;
}

bool SysfsTree::add(const LoopDevice& device, uint64_t size_bytes, uint32_t block_size,
                    const std::string& serial, int nvme_index, std::string* error) {
  const fs::path block = fs::path(root_) / "block";
  const fs::path staging = block / ("." + device.name + ".tmp");
  std::error_code code;
  fs::remove_all(staging, code);
  fs::create_directories(staging / "queue", code);
  fs::create_directories(staging / "device", code);
  bool ok = !code;
  ok = ok && write_file(staging / "dev",
                        std::to_string(device.major) + ":" + std::to_string(device.minor) + "\n");
  ok = ok && write_file(staging / "size", std::to_string(size_bytes / 512) + "\n");
  ok =
      ok && write_file(staging / "queue" / "logical_block_size", std::to_string(block_size) + "\n");
  ok = ok && write_file(staging / "device" / "serial", serial + "\n");
  ok = ok && write_file(staging / "device" / "model", "\n");
  const fs::path controller =
      fs::path(root_) / "class" / "nvme" / ("nvme" + std::to_string(nvme_index));
  fs::create_directories(controller, code);
  ok = ok && !code && write_file(controller / "serial", serial + "\n");
  ok = ok && write_file(controller / "model", "\n");
  if (ok) {
    fs::remove_all(block / device.name, code);
    fs::rename(staging, block / device.name, code);
    ok = !code;
  }
  if (!ok) {
    *error = "cannot write guest sysfs entry for " + device.name;
    fs::remove_all(staging, code);
    fs::remove_all(controller, code);
  }
  return ok;
}

void SysfsTree::remove(const LoopDevice& device, int nvme_index) {
  std::error_code code;
  fs::remove_all(fs::path(root_) / "block" / device.name, code);
  fs::remove_all(fs::path(root_) / "class" / "nvme" / ("nvme" + std::to_string(nvme_index)), code);
}

}  // namespace oxide_sim
