#include "csi/filesystem_options.h"

#include <array>
#include <optional>

#include "csi/csi_context_keys.h"

namespace oxide::csi_adapter {
namespace {

constexpr std::array<const char*, 6> kKeys = {kFsBlockSizeKey,   kInodeSizeKey,
                                              kBytesPerInodeKey, kNumberOfInodesKey,
                                              kExt4BigAllocKey,  kExt4ClusterSizeKey};

constexpr uint64_t kDefaultFsBlockSize = 4096;  // both mkfs choose it for disks of 1 GiB and more
constexpr uint64_t kMaxBytesPerInode = uint64_t{64} << 20;  // mke2fs's limit
constexpr uint64_t kMaxInodes = (uint64_t{1} << 32) - 1;    // ext4's inode numbers are 32 bits
constexpr uint64_t kMaxClusterSize = uint64_t{256} << 20;   // mke2fs's limit

bool PowerOfTwo(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

std::string Quoted(const std::string& value) {
  return "\"" + (value.size() > 40 ? value.substr(0, 40) + "..." : value) + "\"";
}

// Builds the messages: `source` key="value" ...
class Checker {
 public:
  Checker(const StringMap& entries, std::string fs_type, const char* source)
      : entries_(entries), fs_type_(std::move(fs_type)), source_(source) {}

  const std::string* Find(const char* key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
  }

  // The value of `key`, empty when it is absent.
  const std::string& Value(const char* key) const {
    static const std::string kAbsent;
    const std::string* found = Find(key);
    return found != nullptr ? *found : kAbsent;
  }

  Status Bad(const char* key, const std::string& why) const {
    return InvalidArgument(std::string(source_) + " " + key + "=" + Quoted(Value(key)) + " " + why);
  }

  Status NotFor(const char* key, const char* applies_to) const {
    if (fs_type_.empty()) {
      return Bad(key,
                 "cannot apply to a block volume (volume capability access_type block): "
                 "filesystem options apply to mount volumes only");
    }
    return Bad(key, "does not apply to " + fs_type_ + ": " + key + " applies to " + applies_to);
  }

  // A decimal number from `min` to `max`; `power_of_two` adds that rule.
  StatusOr<uint64_t> Number(const char* key, uint64_t min, uint64_t max, bool power_of_two,
                            const std::string& accepted) const {
    const std::string& text = Value(key);
    uint64_t value = 0;
    bool valid = !text.empty() && text.size() <= 19;
    for (char c : text) {
      valid = valid && c >= '0' && c <= '9';
      if (valid) value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!valid || value < min || value > max || (power_of_two && !PowerOfTwo(value))) {
      return Bad(key, "is not valid for " + fs_type_ + ": " + accepted);
    }
    return value;
  }

  const std::string& fs_type() const { return fs_type_; }

 private:
  const StringMap& entries_;
  std::string fs_type_;
  const char* source_;
};

std::string Range(uint64_t min, uint64_t max) {
  return std::to_string(min) + " to " + std::to_string(max);
}

StatusOr<node::FilesystemOptions> ParseExt4(const Checker& check) {
  node::FilesystemOptions options;
  if (check.Find(kFsBlockSizeKey)) {
    auto v = check.Number(kFsBlockSizeKey, 1024, 4096, true,
                          "use 1024, 2048 or 4096 (bytes; at most the 4 KiB page size, so that "
                          "the kernel can mount it)");
    if (!v.ok()) return v.status();
    options.block_size = *v;
  }
  const uint64_t block = options.block_size.value_or(kDefaultFsBlockSize);
  if (check.Find(kInodeSizeKey)) {
    auto v = check.Number(kInodeSizeKey, 128, block, true,
                          "use a power of two from " + Range(128, block) +
                              " bytes (at most the filesystem block size, fsBlockSize, " +
                              std::to_string(block) + ")");
    if (!v.ok()) return v.status();
    options.inode_size = *v;
  }
  if (check.Find(kBytesPerInodeKey)) {
    auto v = check.Number(kBytesPerInodeKey, 1024, kMaxBytesPerInode, false,
                          "use a number of bytes from " + Range(1024, kMaxBytesPerInode));
    if (!v.ok()) return v.status();
    options.bytes_per_inode = *v;
  }
  if (check.Find(kNumberOfInodesKey)) {
    auto v = check.Number(kNumberOfInodesKey, 1, kMaxInodes, false,
                          "use a number of inodes from " + Range(1, kMaxInodes) +
                              " (mkfs.ext4 refuses more than the disk can hold)");
    if (!v.ok()) return v.status();
    if (options.bytes_per_inode) {
      return check.Bad(kNumberOfInodesKey,
                       "cannot be set together with bytesPerInode (mkfs.ext4 -N overrides -i): "
                       "set one of them");
    }
    options.number_of_inodes = *v;
  }
  if (const std::string* text = check.Find(kExt4BigAllocKey)) {
    if (*text != "true" && *text != "false") {
      return check.Bad(kExt4BigAllocKey, "is not valid for ext4: use true or false");
    }
    options.bigalloc = *text == "true";
  }
  if (check.Find(kExt4ClusterSizeKey)) {
    auto v = check.Number(kExt4ClusterSizeKey, block, kMaxClusterSize, true,
                          "use a power of two from " + Range(block, kMaxClusterSize) +
                              " bytes (at least the filesystem block size, fsBlockSize, " +
                              std::to_string(block) + ")");
    if (!v.ok()) return v.status();
    if (!options.bigalloc.value_or(false)) {
      return check.Bad(kExt4ClusterSizeKey,
                       "needs ext4BigAlloc=\"true\": a cluster size applies only to a bigalloc "
                       "filesystem");
    }
    options.cluster_size = *v;
  }
  return options;
}

StatusOr<node::FilesystemOptions> ParseXfs(const Checker& check) {
  for (const char* key :
       {kBytesPerInodeKey, kNumberOfInodesKey, kExt4BigAllocKey, kExt4ClusterSizeKey}) {
    if (check.Find(key)) return check.NotFor(key, "ext4 only");
  }
  node::FilesystemOptions options;
  if (check.Find(kFsBlockSizeKey)) {
    auto v = check.Number(kFsBlockSizeKey, 1024, 4096, true,
                          "use 1024, 2048 or 4096 (bytes; at least 1024 for XFS v5 (CRC) "
                          "filesystems, at most the 4 KiB page size so that the kernel can "
                          "mount it)");
    if (!v.ok()) return v.status();
    options.block_size = *v;
  }
  const uint64_t block = options.block_size.value_or(kDefaultFsBlockSize);
  if (check.Find(kInodeSizeKey)) {
    const uint64_t max = std::min<uint64_t>(2048, block / 2);
    auto v = check.Number(kInodeSizeKey, 512, max, true,
                          "use a power of two from " + Range(512, max) +
                              " bytes (XFS v5 inodes are at least 512 bytes, at most 2048 and "
                              "at most half the filesystem block size, fsBlockSize, " +
                              std::to_string(block) + ")");
    if (!v.ok()) return v.status();
    options.inode_size = *v;
  }
  return options;
}

}  // namespace

bool IsFilesystemOptionKey(const std::string& key) {
  for (const char* known : kKeys) {
    if (key == known) return true;
  }
  return false;
}

StatusOr<node::FilesystemOptions> ParseFilesystemOptions(const StringMap& entries,
                                                         const std::string& fs_type,
                                                         const char* source) {
  Checker check(entries, fs_type, source);
  if (fs_type == "ext4") return ParseExt4(check);
  if (fs_type == "xfs") return ParseXfs(check);
  for (const char* key : kKeys) {
    if (check.Find(key)) return check.NotFor(key, "ext4 and xfs");
  }
  return node::FilesystemOptions{};
}

std::map<std::string, std::string> FilesystemOptionsContext(
    const node::FilesystemOptions& options) {
  std::map<std::string, std::string> context;
  auto put = [&context](const char* key, const std::optional<uint64_t>& value) {
    if (value) context[key] = std::to_string(*value);
  };
  put(kFsBlockSizeKey, options.block_size);
  put(kInodeSizeKey, options.inode_size);
  put(kBytesPerInodeKey, options.bytes_per_inode);
  put(kNumberOfInodesKey, options.number_of_inodes);
  if (options.bigalloc) context[kExt4BigAllocKey] = *options.bigalloc ? "true" : "false";
  put(kExt4ClusterSizeKey, options.cluster_size);
  return context;
}

StatusOr<std::map<std::string, std::string>> CheckFilesystemParameters(
    const StringMap& parameters,
    const google::protobuf::RepeatedPtrField<csi::v1::VolumeCapability>& capabilities,
    uint64_t disk_block_size) {
  std::optional<node::FilesystemOptions> parsed;
  for (const csi::v1::VolumeCapability& capability : capabilities) {
    std::string fs_type;
    if (capability.has_mount()) {
      fs_type =
          capability.mount().fs_type().empty() ? kDefaultFsType : capability.mount().fs_type();
    }
    auto options = ParseFilesystemOptions(parameters, fs_type, "parameter");
    if (!options.ok()) return options.status();
    parsed = *options;
  }
  if (!parsed) return std::map<std::string, std::string>();
  if (parsed->block_size && *parsed->block_size < disk_block_size) {
    return InvalidArgument("parameter fsBlockSize=\"" + std::to_string(*parsed->block_size) +
                           "\" is below the Oxide disk's block size (blockSize " +
                           std::to_string(disk_block_size) +
                           "): a filesystem block cannot be smaller than the device's sector; "
                           "use an fsBlockSize from " +
                           std::to_string(disk_block_size) + " to 4096, or a smaller blockSize");
  }
  return FilesystemOptionsContext(*parsed);
}

StatusOr<node::FilesystemOptions> FilesystemOptionsFromContext(const StringMap& volume_context,
                                                               const CapabilitySpec& capability) {
  return ParseFilesystemOptions(volume_context, capability.block ? "" : capability.fs_type,
                                "volume_context");
}

}  // namespace oxide::csi_adapter
