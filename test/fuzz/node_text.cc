// Fuzz target: the text the node reads from the kernel and the CO: /proc/self/mountinfo, sysfs
// serials, CSI mount_flags and paths. The first byte picks the reader. Invariants: nothing
// crashes or throws; every mount point the mountinfo parser returns is absolute (it is compared
// with CSI paths); a serial read back is trimmed; accepted mount flags never include the flags
// that would move, rebind or remount something else; an accepted path is absolute and
// normalized.
#include <sys/mount.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_target.h"
#include "node/device_finder.h"
#include "node/mounter.h"
#include "node/path_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0: {
      for (const auto& entry : oxide::node::ParseMountInfo(text)) {
        Expect(!entry.mount_point.empty() && entry.mount_point[0] == '/');
        (void)oxide::node::FindMount({entry}, entry.mount_point);  // only crashes matter
      }
      break;
    }
    case 1: {
      const std::string serial = oxide::node::TrimSerial(text);
      Expect(serial.empty() ||
             (serial.back() != '\n' && serial.back() != ' ' && serial.back() != '\0'));
      (void)oxide::node::LooksLikePluginSerial(serial);
      break;
    }
    case 2: {
      std::vector<std::string> flags;
      std::istringstream in(text);
      for (std::string flag; std::getline(in, flag);)
        flags.push_back(flag);
      const auto options = oxide::node::ParseMountFlags(flags);
      if (options.ok()) {
        Expect((options->flags & (MS_BIND | MS_MOVE | MS_REMOUNT | MS_SHARED | MS_PRIVATE |
                                  MS_SLAVE | MS_UNBINDABLE)) == 0);
      }
      break;
    }
    default:
      if (oxide::node::CheckVolumePath("target_path", text).ok()) {
        Expect(text[0] == '/' && text.find('\0') == std::string::npos &&
               text.find("/../") == std::string::npos && text.find("/./") == std::string::npos);
      }
  }
  return 0;
}
