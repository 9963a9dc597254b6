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

namespace {

// True when /dev/loop<number> exists and is bound to a file (its sysfs "loop" group exists only
// then). A number the kernel has not created yet counts as free.
bool loop_is_bound(int number) {
  std::error_code ignored;
  return std::filesystem::exists("/sys/block/loop" + std::to_string(number) + "/loop", ignored);
}

int loop_number(const std::string& name) {
  if (name.rfind("loop", 0) != 0 || name.size() == 4) return -1;
  int number = 0;
  for (size_t i = 4; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || number > 1000000) return -1;
    number = number * 10 + (name[i] - '0');
  }
  return number;
}

enum class Bind { kDone, kRetry, kFailed };

// Binds loop<number> to the open backing file. kRetry: another process took it first (or its
// node is not there yet); kFailed: the kernel refused the file.
Bind bind_loop(int control_fd, int number, int backing_fd, const std::string& file,
               uint32_t block_size, LoopDevice* out, std::string* error) {
  const std::string name = "loop" + std::to_string(number);
  // Makes sure the device exists (EEXIST when it does: fine).
  ::ioctl(control_fd, LOOP_CTL_ADD, number);
  Fd device(::open(("/dev/" + name).c_str(), O_RDWR | O_CLOEXEC));
  if (device.get() < 0) {
    *error = errno_text("cannot open /dev/" + name);
    return Bind::kRetry;
  }
  loop_config config{};
  config.fd = static_cast<__u32>(backing_fd);
  config.block_size = block_size;
  std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), file.c_str(), LO_NAME_SIZE - 1);
  if (::ioctl(device.get(), LOOP_CONFIGURE, &config) != 0) {
    *error = errno_text("LOOP_CONFIGURE on /dev/" + name);
    return errno == EBUSY ? Bind::kRetry : Bind::kFailed;
  }
  struct stat info {};
  ::fstat(device.get(), &info);
  *out = LoopDevice{name, major(info.st_rdev), minor(info.st_rdev)};
  return Bind::kDone;
}

}  // namespace

std::optional<LoopDevice> attach_loop_device(const std::string& file, uint32_t block_size,
                                             const LoopChoice& choice, std::string* error) {
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
  LoopDevice device;
  const int preferred = loop_number(choice.preferred);
  if (preferred >= 0 && !loop_is_bound(preferred)) {
    // Taken by another process since it was released: fall back to the lowest free one.
    if (bind_loop(control.get(), preferred, backing.get(), file, block_size, &device, error) ==
        Bind::kDone) {
      return device;
    }
  }
  for (int attempt = 0; attempt < 16; ++attempt) {
    int number = ::ioctl(control.get(), LOOP_CTL_GET_FREE);
    if (number < 0) {
      *error = errno_text("LOOP_CTL_GET_FREE");
      return std::nullopt;
    }
    // The lowest free number may be reserved: take the next one that is neither reserved nor bound.
    while (choice.avoid.count("loop" + std::to_string(number)) > 0 || loop_is_bound(number)) {
      ++number;
    }
    switch (bind_loop(control.get(), number, backing.get(), file, block_size, &device, error)) {
      case Bind::kDone:
        return device;
      case Bind::kRetry:
        continue;
      case Bind::kFailed:
        return std::nullopt;
    }
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
