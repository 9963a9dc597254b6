#include "node/filesystem_history.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <vector>

namespace oxide::node {
namespace {

std::string Trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

// "Key<separator> value" lines (tune2fs: ':', xfs_db: '=') into a map of trimmed strings.
std::map<std::string, std::string> ParseFields(const std::string& text, char separator) {
  std::map<std::string, std::string> fields;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find(separator);
    if (at != std::string::npos) fields[Trim(line.substr(0, at))] = Trim(line.substr(at + 1));
  }
  return fields;
}

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

StatusOr<FilesystemHistory> Ext4History(const std::string& device_node,
                                        const CommandLimits& limits) {
  std::vector<std::string> argv = {"tune2fs", "-l", device_node};
  auto run = RunCommand(argv, limits.command);
  if (!run.ok()) return run.status();
  auto fields = ParseFields(run->output, ':');
  if (run->exit_code != 0 || fields.count("Filesystem UUID") == 0 ||
      fields.count("Mount count") == 0) {
    return FailedPrecondition("no readable ext4 superblock on " + device_node + ": " +
                              DescribeFailure(argv, *run));
  }
  FilesystemHistory history;
  history.uuid = Lowercase(fields["Filesystem UUID"]);
  const std::string& count = fields["Mount count"];
  const std::string last_mount = fields.count("Last mount time") ? fields["Last mount time"] : "";
  const bool never_counted = count == "0";
  const bool no_mount_time = last_mount.empty() || last_mount == "n/a";
  history.mounted_since_mkfs = !never_counted || !no_mount_time;
  history.evidence = "mount count " + count;
  history.evidence += no_mount_time ? ", never mounted" : ", last mounted " + last_mount;
  const std::string& mounted_on = fields["Last mounted on"];
  if (!mounted_on.empty() && mounted_on != "<not available>") {
    history.evidence += " on " + mounted_on;
  }
  return history;
}

StatusOr<FilesystemHistory> XfsHistory(const std::string& device_node,
                                       const CommandLimits& limits) {
  std::vector<std::string> argv = {
      "xfs_db", "-r", "-c", "sb 0", "-c", "p uuid lsn versionnum inprogress", device_node};
  auto run = RunCommand(argv, limits.command);
  if (!run.ok()) return run.status();
  auto fields = ParseFields(run->output, '=');
  if (run->exit_code != 0 || fields.count("uuid") == 0 || fields.count("lsn") == 0 ||
      fields.count("versionnum") == 0) {
    return FailedPrecondition("no readable XFS superblock on " + device_node + ": " +
                              DescribeFailure(argv, *run));
  }
  FilesystemHistory history;
  history.uuid = Lowercase(fields["uuid"]);
  history.mkfs_unfinished = fields.count("inprogress") != 0 && fields["inprogress"] != "0";
  const unsigned long version = std::strtoul(fields["versionnum"].c_str(), nullptr, 0) & 0xf;
  if (version < 5) {
    // Only V5 superblocks record the log sequence number of their last write.
    history.mounted_since_mkfs = true;
    history.evidence = "an XFS V" + std::to_string(version) +
                       " superblock records no log sequence number: assumed mounted";
    return history;
  }
  const std::string& lsn = fields["lsn"];
  history.mounted_since_mkfs = std::strtoull(lsn.c_str(), nullptr, 0) != 0;
  history.evidence = "log sequence number " + lsn +
                     (history.mounted_since_mkfs ? "" : " (as mkfs leaves it: never mounted)");
  return history;
}

}  // namespace

StatusOr<FilesystemHistory> ReadFilesystemHistory(const std::string& device_node,
                                                  const std::string& fs_type,
                                                  const CommandLimits& limits) {
  if (fs_type == "ext4") return Ext4History(device_node, limits);
  if (fs_type == "xfs") return XfsHistory(device_node, limits);
  return InvalidArgument("cannot read the history of a \"" + fs_type + "\" filesystem");
}

}  // namespace oxide::node
