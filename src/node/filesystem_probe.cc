#include "node/filesystem_probe.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include "node/command_runner.h"

namespace oxide::node {
namespace {

// Filesystems and partition tables keep their metadata at the start (and GPT a copy at the end):
// a disk whose first 8 MiB and last MiB are zeros has never held either.
constexpr size_t kHeadBytes = 8 * 1024 * 1024;
constexpr size_t kTailBytes = 1024 * 1024;

std::map<std::string, std::string> ParseExport(const std::string& text) {
  std::map<std::string, std::string> values;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

// True when the first kHeadBytes and the last kTailBytes of the device read as zeros.
StatusOr<bool> EdgesAreZero(const std::string& device_node) {
  int fd = open(device_node.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FailedPrecondition("cannot open " + device_node + ": " + std::strerror(errno));
  uint64_t size = 0;
  if (ioctl(fd, BLKGETSIZE64, &size) != 0) {
    close(fd);
    return FailedPrecondition("cannot read the size of " + device_node);
  }
  std::vector<char> buffer(kHeadBytes);
  bool zero = true;
  struct Range {
    uint64_t offset;
    size_t length;
  };
  for (Range range :
       {Range{0, kHeadBytes}, Range{size > kTailBytes ? size - kTailBytes : 0, kTailBytes}}) {
    ssize_t n = pread(fd, buffer.data(), range.length, static_cast<off_t>(range.offset));
    if (n < 0) {
      close(fd);
      return FailedPrecondition("cannot read " + device_node + ": " + std::strerror(errno));
    }
    for (ssize_t i = 0; i < n && zero; ++i)
      zero = buffer[static_cast<size_t>(i)] == 0;
  }
  close(fd);
  return zero;
}

}  // namespace

StatusOr<DeviceContent> ProbeDevice(const std::string& device_node, const CommandLimits& limits) {
  std::vector<std::string> argv = {"blkid", "-p", "-o", "export", device_node};
  auto run = RunCommand(argv, limits.command);
  if (!run.ok()) return run.status();
  DeviceContent content;
  if (run->exit_code == 0) {
    auto values = ParseExport(run->output);
    if (values.count("PTTYPE") != 0) {
      content.kind = DeviceContent::Kind::kPartitionTable;
      content.detail = "partition table " + values["PTTYPE"];
    } else if (values.count("TYPE") != 0 && values["USAGE"] == "filesystem") {
      content.kind = DeviceContent::Kind::kFilesystem;
      content.fs_type = values["TYPE"];
      content.uuid = values["UUID"];
    } else {
      content.kind = DeviceContent::Kind::kOtherSignature;
      content.detail = "signature " + (values.count("TYPE") != 0 ? values["TYPE"] : "unknown");
    }
    return content;
  }
  if (run->exit_code == 8) {  // ambivalent: several signatures
    content.kind = DeviceContent::Kind::kOtherSignature;
    content.detail = "several signatures (" + DescribeFailure(argv, *run) + ")";
    return content;
  }
  if (run->exit_code != 2) {  // 2 = nothing found; anything else: blkid could not look
    return Unavailable("cannot read what " + device_node +
                       " holds: " + DescribeFailure(argv, *run) + "; the call can be retried");
  }
  auto zero = EdgesAreZero(device_node);
  if (!zero.ok()) return zero.status();
  content.kind = *zero ? DeviceContent::Kind::kBlank : DeviceContent::Kind::kUnknownData;
  if (!*zero) content.detail = "no known signature, but the first or last MiB holds data";
  return content;
}

}  // namespace oxide::node
