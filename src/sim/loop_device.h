// Thin wrapper over the Linux loop-device ioctls (LOOP_CTL_GET_FREE, LOOP_CONFIGURE,
// LOOP_CLR_FD) plus a block-device flush. Needs root. Blocking but short; called inline
// on the event-loop thread.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace oxide_sim {

struct LoopDevice {
  std::string name;  // "loop7"
  unsigned major = 0;
  unsigned minor = 0;
  std::string path() const { return "/dev/" + name; }
};

// Which loop device to take: `preferred` ("loop7") if it is free, else the lowest free one
// whose name is not in `avoid` (names another guest expects to get back at its next start).
struct LoopChoice {
  std::string preferred;
  std::set<std::string> avoid;
};

// Binds a free loop device to `file` with the given logical block size.
std::optional<LoopDevice> attach_loop_device(const std::string& file, uint32_t block_size,
                                             const LoopChoice& choice, std::string* error);

// Unbinds /dev/<name>. Returns false with *error if the kernel refused.
bool detach_loop_device(const std::string& name, std::string* error);

// fsync + BLKFLSBUF on a block device, so data written through it reaches the backing file.
void flush_block_device(const std::string& device_path);

// Names of loop devices whose backing file lies in `directory` (from /sys/block/loop*/loop).
std::vector<std::string> loop_devices_backed_in(const std::string& directory);

}  // namespace oxide_sim
