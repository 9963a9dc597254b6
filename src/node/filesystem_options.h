// What a volume asks of mkfs beyond the filesystem type (the StorageClass's inodeSize,
// bytesPerInode, numberOfInodes, ext4BigAlloc, ext4ClusterSize and fsBlockSize, carried to the
// node in volume_context), and the feature profile mkfs.xfs is pinned to
// (--xfs-feature-profile) so that the kernels of older node images can mount what it makes.
// The values here are already validated (src/csi/filesystem_options.h checks them at
// CreateVolume and again at NodeStageVolume). Pure functions and constants: any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace oxide::node {

struct FilesystemOptions {
  std::optional<uint64_t> block_size;        // ext4 -b, xfs -b size=
  std::optional<uint64_t> inode_size;        // ext4 -I, xfs -i size=
  std::optional<uint64_t> bytes_per_inode;   // ext4 -i
  std::optional<uint64_t> number_of_inodes;  // ext4 -N
  std::optional<bool> bigalloc;              // ext4 -O bigalloc (when true)
  std::optional<uint64_t> cluster_size;      // ext4 -C (bigalloc only)

  bool empty() const {
    return !block_size && !inode_size && !bytes_per_inode && !number_of_inodes && !bigalloc &&
           !cluster_size;
  }
  bool operator==(const FilesystemOptions&) const = default;
};

// The mkfs arguments `options` add for `fs_type` ("ext4" or "xfs"), in a fixed order.
std::vector<std::string> MkfsOptionArguments(const FilesystemOptions& options,
                                             const std::string& fs_type);

// "inodeSize=512 fsBlockSize=2048", in a fixed order, for logs and the repeat fingerprint;
// empty for no options.
std::string DescribeFilesystemOptions(const FilesystemOptions& options);

// ---- the XFS feature profile --------------------------------------------------------------

// The profile used when none is configured: the feature set of xfsprogs' lts_5.4.conf, which
// Linux 5.4 and newer mount.
inline constexpr const char* kDefaultXfsFeatureProfile = "lts_5.4";

// The built-in profiles' names (xfsprogs' lts_*.conf names), oldest kernel first.
const std::vector<std::string>& XfsFeatureProfileNames();

// True for a built-in profile name, "none" (mkfs.xfs's own defaults) or an absolute path (an
// mkfs.xfs config file, passed as -c options=PATH).
bool IsValidXfsFeatureProfile(const std::string& profile);

// The mkfs.xfs arguments that pin `profile`'s feature set: a built-in profile's -m/-i options,
// nothing for "none", -c options=PATH for a config file. FAILED_PRECONDITION when the config file
// cannot be read when mkfs is to run: the operator pinned a feature set for their kernels, and
// another one is never chosen in its place.
StatusOr<std::vector<std::string>> XfsFeatureArguments(const std::string& profile);

}  // namespace oxide::node
