#include "support/loop_disk.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace oxide::testing {

namespace fs = std::filesystem;

namespace {

// Whether nothing holds `node` exclusively (a mount, an mkfs, a tool a udev rule runs): mkfs
// opens the device O_EXCL and refuses it ("apparently in use by the system") otherwise.
bool Unclaimed(const std::string& node) {
  const int fd = open(node.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace

int Shell(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  std::string text;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr)
    text += buffer;
  int status = pclose(pipe);
  if (output != nullptr) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

LoopDisk::LoopDisk(const std::string& image, const std::string& sysfs_root,
                   const std::string& serial, int size_mib)
    : image_(image), sysfs_root_(sysfs_root) {
  std::string out;
  if (Shell("truncate -s " + std::to_string(size_mib) + "M " + image) != 0) return;
  if (Shell("losetup -f --show " + image, &out) != 0) return;
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  node_ = out;
  // Where udev runs, attaching raised events whose rules probe the new device: the device is
  // handed over once udev has handled them and nothing holds it. The wait for the claim is a
  // check (a released claim raises no event), with a time limit as a safety net only.
  Shell("if command -v udevadm >/dev/null; then udevadm settle --timeout=10; fi");
  settled_ = WaitUntil([this] { return Unclaimed(node_); }, std::chrono::seconds(10));
  if (!serial.empty()) Show(serial);
}

LoopDisk::~LoopDisk() {
  if (node_.empty()) return;
  Hide();
  Shell("losetup -d " + node_);
}

void LoopDisk::Show(const std::string& serial) const {
  std::string dir = sysfs_root_ + "/block/" + name();
  fs::create_directories(dir + "/device");
  WriteFile(dir + "/dev", ReadFile("/sys/block/" + name() + "/dev"));
  WriteFile(dir + "/device/serial", serial + "\n");
}

void LoopDisk::Hide() const {
  std::error_code ec;
  fs::remove_all(sysfs_root_ + "/block/" + name(), ec);
}

std::vector<std::string> MountsUnder(const std::string& prefix) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::vector<std::string> out;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string skip, point;
    fields >> skip >> skip >> skip >> skip >> point;
    std::string decoded;
    for (size_t i = 0; i < point.size(); ++i) {
      if (point[i] == '\\' && i + 3 < point.size()) {
        decoded += static_cast<char>(std::stoi(point.substr(i + 1, 3), nullptr, 8));
        i += 3;
      } else {
        decoded += point[i];
      }
    }
    if (decoded.rfind(prefix, 0) == 0) out.push_back(decoded);
  }
  return out;
}

}  // namespace oxide::testing
