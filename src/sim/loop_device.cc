#include "loop_device.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace oxide_sim {
namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

}  // namespace

std::optional<LoopDevice> attach_loop_device(const std::string& file, uint32_t block_size,
                                             std::string* error) {
  Fd backing(::open(file.c_str(), O_RDWR | O_CLOEXEC));
  if (backing.get() < 0) {
    *error = errno_text("cannot open backing file " + file);
    return std::nullopt;
  }
  Fd control(::open("/dev/loop-control", O_RDWR | O_CLOEXEC));
  if (control.get() < 0) {
    *error = errno_text("cannot open /dev/loop-control");
    return std::nullopt;
  }
  for (int attempt = 0; attempt < 16; ++attempt) {
    const int number = ::ioctl(control.get(), LOOP_CTL_GET_FREE);
    if (number < 0) {
      *error = errno_text("LOOP_CTL_GET_FREE");
      return std::nullopt;
    }
    const std::string name = "loop" + std::to_string(number);
    Fd device(::open(("/dev/" + name).c_str(), O_RDWR | O_CLOEXEC));
    if (device.get() < 0) {
      *error = errno_text("cannot open /dev/" + name);
      continue;
    }
    loop_config config{};
    config.fd = static_cast<__u32>(backing.get());
    config.block_size = block_size;
    std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), file.c_str(), LO_NAME_SIZE - 1);
    if (::ioctl(device.get(), LOOP_CONFIGURE, &config) != 0) {
      *error = errno_text("LOOP_CONFIGURE on /dev/" + name);
      if (errno == EBUSY) continue;  // another process took it first
      return std::nullopt;
    }
    struct stat info {};
    ::fstat(device.get(), &info);
    return LoopDevice{name, major(info.st_rdev), minor(info.st_rdev)};
  }
  return std::nullopt;
}

bool detach_loop_device(const std::string& name, std::string* error) {
  Fd device(::open(("/dev/" + name).c_str(), O_RDWR | O_CLOEXEC));
  if (device.get() < 0) {
    *error = errno_text("cannot open /dev/" + name);
    return false;
  }
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::ioctl(device.get(), LOOP_CLR_FD, 0) == 0) return true;
    if (errno != EBUSY) break;
    ::usleep(20000);
  }
  *error = errno_text("LOOP_CLR_FD on /dev/" + name);
  return false;
}

void flush_block_device(const std::string& device_path) {
  Fd device(::open(device_path.c_str(), O_RDWR | O_CLOEXEC));
  if (device.get() < 0) return;
  ::fsync(device.get());
  ::ioctl(device.get(), BLKFLSBUF, 0);
}

std::vector<std::string> loop_devices_backed_in(const std::string& directory) {
  std::vector<std::string> out;
  std::error_code ignored;
  const std::string prefix = std::filesystem::weakly_canonical(directory, ignored).string() + "/";
  for (const auto& entry : std::filesystem::directory_iterator("/sys/block", ignored)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("loop", 0) != 0) continue;
    std::ifstream backing(entry.path() / "loop" / "backing_file");
    std::string file;
    if (!std::getline(backing, file)) continue;
    if (file.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

}  // namespace oxide_sim
