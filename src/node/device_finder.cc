#include "node/device_finder.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace oxide::node {
namespace {

namespace fs = std::filesystem;

std::string ReadSmallFile(const fs::path& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool ParseDeviceNumber(const std::string& text, unsigned* major_out, unsigned* minor_out) {
  unsigned major_number = 0;
  unsigned minor_number = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%u:%u%c", &major_number, &minor_number, &extra) < 2) return false;
  *major_out = major_number;
  *minor_out = minor_number;
  return true;
}

Status VerifyNode(const std::string& sysfs_root, BlockDevice* device) {
  bool ok = false;
  std::string number = ReadSmallFile(fs::path(sysfs_root) / "block" / device->name / "dev", &ok);
  if (!ok || !ParseDeviceNumber(number, &device->major, &device->minor)) {
    return FailedPrecondition("cannot read the device number of " + device->name + " from " +
                              sysfs_root + "/block/" + device->name + "/dev");
  }
  struct stat info {};
  if (stat(device->node.c_str(), &info) != 0 || !S_ISBLK(info.st_mode)) {
    return FailedPrecondition(device->node + " is not a block device");
  }
  if (major(info.st_rdev) != device->major || minor(info.st_rdev) != device->minor) {
    return FailedPrecondition(device->node + " is device " + std::to_string(major(info.st_rdev)) +
                              ":" + std::to_string(minor(info.st_rdev)) + " but sysfs says " +
                              device->Number() + "; refusing to use it");
  }
  return Status::Ok();
}

}  // namespace

std::string TrimSerial(std::string raw) {
  while (!raw.empty() &&
         (raw.back() == '\0' || std::isspace(static_cast<unsigned char>(raw.back())))) {
    raw.pop_back();
  }
  return raw;
}

bool LooksLikePluginSerial(const std::string& serial) {
  if (serial.size() != kSerialLength || serial.rfind("csi-", 0) != 0) return false;
  for (size_t i = 4; i < serial.size(); ++i) {
    char c = serial[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

StatusOr<BlockDevice> FindDeviceBySerial(const std::string& sysfs_root, const std::string& serial) {
  std::vector<std::string> matches;
  std::error_code ec;
  fs::path block_dir = fs::path(sysfs_root) / "block";
  for (fs::directory_iterator it(block_dir, ec), end; !ec && it != end; it.increment(ec)) {
    bool ok = false;
    std::string found = TrimSerial(ReadSmallFile(it->path() / "device" / "serial", &ok));
    if (ok && found == serial) matches.push_back(it->path().filename().string());
  }
  if (matches.empty()) {
    return NotFound("no block device with NVMe serial \"" + serial + "\" under " + sysfs_root +
                    "/block (is the disk attached to this instance?)");
  }
  if (matches.size() > 1) {
    std::string names;
    for (const std::string& name : matches)
      names += (names.empty() ? "" : ", ") + name;
    return FailedPrecondition("ambiguous: " + std::to_string(matches.size()) +
                              " block devices have NVMe serial \"" + serial + "\" (" + names +
                              "); refusing to guess");
  }
  BlockDevice device{.name = matches[0], .node = "/dev/" + matches[0]};
  Status verified = VerifyNode(sysfs_root, &device);
  if (!verified.ok()) return verified;
  return device;
}

bool DeviceStillPresent(const std::string& sysfs_root, const BlockDevice& device) {
  BlockDevice again{.name = device.name, .node = device.node};
  return VerifyNode(sysfs_root, &again).ok() && again.major == device.major &&
         again.minor == device.minor;
}

int CountUnmanagedNvmeDevices(const std::string& sysfs_root) {
  int count = 0;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(sysfs_root) / "class" / "nvme", ec), end;
       !ec && it != end; it.increment(ec)) {
    bool ok = false;
    std::string serial = TrimSerial(ReadSmallFile(it->path() / "serial", &ok));
    if (ok && !LooksLikePluginSerial(serial)) ++count;
  }
  return count;
}

}  // namespace oxide::node
