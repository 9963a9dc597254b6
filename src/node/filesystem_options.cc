#include "node/filesystem_options.h"

#include <unistd.h>

#include <array>

#include "util/log.h"

namespace oxide::node {
namespace {

struct XfsProfile {
  const char* name;
  bool reflink;
  bool bigtime_and_inobtcount;
};

// xfsprogs' /usr/share/xfsprogs/mkfs/lts_*.conf as command-line options. Debian 12's xfsprogs
// 6.1.0 ships these files with nrext64 under [metadata], where its own mkfs.xfs rejects it
// ("invalid config file option"), so the plugin does not read them: every profile sets
// crc=1, finobt=1, rmapbt=0, sparse=1 and nrext64=0, and these two differ.
constexpr std::array<XfsProfile, 5> kXfsProfiles = {{
    {"lts_4.19", false, false},
    {"lts_5.4", true, false},
    {"lts_5.10", true, false},
    {"lts_5.15", true, true},
    {"lts_6.1", true, true},
}};

const XfsProfile* FindProfile(const std::string& name) {
  for (const XfsProfile& profile : kXfsProfiles) {
    if (name == profile.name) return &profile;
  }
  return nullptr;
}

std::vector<std::string> ProfileArguments(const XfsProfile& profile) {
  const char* recent = profile.bigtime_and_inobtcount ? "1" : "0";
  return {"-m",
          std::string("crc=1,finobt=1,rmapbt=0,reflink=") + (profile.reflink ? "1" : "0") +
              ",bigtime=" + recent + ",inobtcount=" + recent,
          "-i", "sparse=1,nrext64=0"};
}

}  // namespace

std::vector<std::string> MkfsOptionArguments(const FilesystemOptions& options,
                                             const std::string& fs_type) {
  std::vector<std::string> args;
  if (fs_type == "ext4") {
    if (options.block_size) args.insert(args.end(), {"-b", std::to_string(*options.block_size)});
    if (options.inode_size) args.insert(args.end(), {"-I", std::to_string(*options.inode_size)});
    if (options.bytes_per_inode) {
      args.insert(args.end(), {"-i", std::to_string(*options.bytes_per_inode)});
    }
    if (options.number_of_inodes) {
      args.insert(args.end(), {"-N", std::to_string(*options.number_of_inodes)});
    }
    if (options.bigalloc.value_or(false)) args.insert(args.end(), {"-O", "bigalloc"});
    if (options.cluster_size) {
      args.insert(args.end(), {"-C", std::to_string(*options.cluster_size)});
    }
  } else if (fs_type == "xfs") {
    if (options.block_size) {
      args.insert(args.end(), {"-b", "size=" + std::to_string(*options.block_size)});
    }
    if (options.inode_size) {
      args.insert(args.end(), {"-i", "size=" + std::to_string(*options.inode_size)});
    }
  }
  return args;
}

std::string DescribeFilesystemOptions(const FilesystemOptions& options) {
  std::string text;
  auto add = [&text](const char* key, const std::string& value) {
    if (!text.empty()) text += ' ';
    text += std::string(key) + "=" + value;
  };
  if (options.block_size) add("fsBlockSize", std::to_string(*options.block_size));
  if (options.inode_size) add("inodeSize", std::to_string(*options.inode_size));
  if (options.bytes_per_inode) add("bytesPerInode", std::to_string(*options.bytes_per_inode));
  if (options.number_of_inodes) add("numberOfInodes", std::to_string(*options.number_of_inodes));
  if (options.bigalloc) add("ext4BigAlloc", *options.bigalloc ? "true" : "false");
  if (options.cluster_size) add("ext4ClusterSize", std::to_string(*options.cluster_size));
  return text;
}

const std::vector<std::string>& XfsFeatureProfileNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const XfsProfile& profile : kXfsProfiles)
      all.emplace_back(profile.name);
    return all;
  }();
  return names;
}

bool IsValidXfsFeatureProfile(const std::string& profile) {
  return profile == "none" || FindProfile(profile) != nullptr ||
         (!profile.empty() && profile[0] == '/' && profile.find('\0') == std::string::npos);
}

StatusOr<std::vector<std::string>> XfsFeatureArguments(const std::string& profile) {
  if (profile == "none") return std::vector<std::string>{};
  if (const XfsProfile* builtin = FindProfile(profile)) return ProfileArguments(*builtin);
  if (!profile.empty() && profile[0] == '/' && access(profile.c_str(), R_OK) == 0) {
    return std::vector<std::string>{"-c", "options=" + profile};
  }
  return FailedPrecondition("the XFS feature profile " + profile +
                            " (--xfs-feature-profile) cannot be read; the volume is not formatted "
                            "with another feature set: fix the file or the flag");
}

}  // namespace oxide::node
