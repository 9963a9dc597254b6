// Reading the kernel's log (/dev/kmsg) to explain a failed mount: the records that name a device,
// either all those still in the ring (KernelMessagesAbout in mounter.h) or only those logged
// after a point in time (KernelLogCursor, taken before a mount(2) call). Blocking file reads that
// never wait for new records: call off the loop thread. One cursor per thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace oxide::node {

// The text of one /dev/kmsg record ("6,1234,5678,-;XFS (loop3): ...\n KEY=value"): what follows
// the first ';' up to the end of the first line.
std::string KernelRecordText(const std::string& record);

// True when `text` names `device_name` as a whole word ("loop3" in "XFS (loop3):", not in
// "loop30").
bool NamesDevice(const std::string& text, const std::string& device_name);

// True when `text` is a filesystem's message that names no device ("ext4: Unknown parameter
// 'x'", "xfs: ..."): what the kernel says about a mount's options.
bool IsDevicelessMessageOf(const std::string& text, const std::string& fs_type);

class KernelLogCursor {
 public:
  // Opens /dev/kmsg at its end; inert when it cannot be read.
  KernelLogCursor();
  ~KernelLogCursor();
  KernelLogCursor(const KernelLogCursor&) = delete;
  KernelLogCursor& operator=(const KernelLogCursor&) = delete;

  // The last `max_lines` records logged since the cursor was made that name `device_name` or are
  // `fs_type`'s deviceless messages.
  std::vector<std::string> MessagesAbout(const std::string& device_name, const std::string& fs_type,
                                         size_t max_lines);

 private:
  int fd_ = -1;
};

}  // namespace oxide::node
