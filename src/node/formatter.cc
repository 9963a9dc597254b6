#include "node/formatter.h"

#include <chrono>
#include <vector>

#include "metrics/plugin_metrics.h"
#include "node/command_runner.h"

namespace oxide::node {

bool IsSupportedFilesystem(const std::string& fs_type) {
  return fs_type == "ext4" || fs_type == "xfs";
}

Status MakeFilesystem(const std::string& device_node, const std::string& fs_type, bool force) {
  if (!IsSupportedFilesystem(fs_type)) {
    return InvalidArgument("cannot create filesystem type \"" + fs_type + "\"");
  }
  // Without `force`, mkfs refuses on its own if it finds a signature we missed.
  std::vector<std::string> argv = fs_type == "ext4" ? std::vector<std::string>{"mkfs.ext4", "-q"}
                                                    : std::vector<std::string>{"mkfs.xfs", "-q"};
  if (force) argv.push_back(fs_type == "ext4" ? "-F" : "-f");
  argv.push_back(device_node);
  const auto started = std::chrono::steady_clock::now();
  auto run = RunCommand(argv);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) return Internal("formatting failed: " + DescribeFailure(argv, *run));
  metrics::Families().mkfs_duration.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return Status::Ok();
}

Status CheckFilesystem(const std::string& device_node, const std::string& fs_type) {
  if (fs_type != "ext4") return Status::Ok();
  std::vector<std::string> argv = {"fsck.ext4", "-p", device_node};
  auto run = RunCommand(argv);
  if (!run.ok()) return run.status();
  if (run->exit_code == 0 || run->exit_code == 1) return Status::Ok();
  return FailedPrecondition("the filesystem check found problems it could not fix: " +
                            DescribeFailure(argv, *run) + "; repair the disk by hand");
}

}  // namespace oxide::node
