#include "node/luks.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>

namespace oxide::node {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMapperDir = "/dev/mapper";
// cryptsetup's exit codes (man cryptsetup, RETURN CODES).
constexpr int kNoKeyAvailable = 2;
constexpr int kDeviceNotActive = 4;
constexpr int kDeviceBusy = 5;

// Without udev in the container, libdevmapper creates the /dev/mapper node itself instead of
// waiting for a udev event that never comes.
std::vector<std::string> Cryptsetup(std::vector<std::string> args) {
  std::vector<std::string> argv = {"env", "DM_DISABLE_UDEV=1", "cryptsetup"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::optional<std::string> DeviceNumberOf(const std::string& node) {
  struct stat info {};
  if (stat(node.c_str(), &info) != 0 || !S_ISBLK(info.st_mode)) return std::nullopt;
  return std::to_string(major(info.st_rdev)) + ":" + std::to_string(minor(info.st_rdev));
}

StatusOr<BlockDevice> MapperDevice(const std::string& name) {
  const std::string node = std::string(kMapperDir) + "/" + name;
  struct stat info {};
  if (stat(node.c_str(), &info) != 0 || !S_ISBLK(info.st_mode)) {
    return FailedPrecondition(node + " is not a block device");
  }
  // The name is the device's path under /dev ("dm-3" through udev's symlink, "mapper/<name>"
  // without udev): what a bind mount of the node shows as its root in the mount table.
  std::error_code ec;
  const std::string resolved = fs::canonical(node, ec).string();
  const bool under_dev = !ec && resolved.rfind("/dev/", 0) == 0;
  return BlockDevice{.name = under_dev ? resolved.substr(5) : "mapper/" + name,
                     .node = node,
                     .major = major(info.st_rdev),
                     .minor = minor(info.st_rdev)};
}

// The device's logical sector size (BLKSSZGET); 0 when it cannot be read.
int LogicalSectorSize(const std::string& node) {
  int fd = open(node.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  int size = 0;
  if (ioctl(fd, BLKSSZGET, &size) != 0) size = 0;
  close(fd);
  return size;
}

std::string StatusField(const std::string& output, const std::string& field) {
  size_t at = 0;
  while (at < output.size()) {
    size_t end = output.find('\n', at);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(at, end - at);
    at = end + 1;
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.compare(start, field.size(), field) != 0) continue;
    std::string value = line.substr(start + field.size());
    size_t first = value.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    value = value.substr(first);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\r'))
      value.pop_back();
    return value;
  }
  return "";
}

// Each format or open runs argon2id with 64 MiB for about two seconds: after a reboot the kubelet
// stages many volumes at once, and the node plugin's memory limit must hold them. Two at a time;
// the others wait on their worker thread.
class KdfSlots {
 public:
  KdfSlots() = default;
  void Enter() {
    std::unique_lock<std::mutex> lock(mutex_);
    free_.wait(lock, [this] { return running_ < kSlots; });
    ++running_;
  }
  void Leave() {
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
    free_.notify_one();
  }

 private:
  static constexpr int kSlots = 2;
  std::mutex mutex_;
  std::condition_variable free_;
  int running_ = 0;
};

StatusOr<CommandResult> RunWithPassphrase(const std::vector<std::string>& argv,
                                          std::chrono::milliseconds timeout,
                                          const std::string& passphrase) {
  static KdfSlots slots;
  slots.Enter();
  auto run = RunCommand(argv, timeout, &passphrase);
  slots.Leave();
  return run;
}

}  // namespace

std::string MapperName(const std::string& serial) {
  return kMapperPrefix + serial;
}

bool IsPluginMapperName(const std::string& name) {
  return name.rfind(kMapperPrefix, 0) == 0 && LooksLikePluginSerial(name.substr(10));
}

Status CheckPassphrase(const std::string& passphrase, const std::string& secret_key) {
  if (passphrase.empty()) {
    return InvalidArgument("the NodeStage secret key \"" + secret_key + "\" is empty");
  }
  if (passphrase.size() > kMaxPassphraseBytes) {
    return InvalidArgument("the NodeStage secret key \"" + secret_key + "\" is longer than " +
                           std::to_string(kMaxPassphraseBytes) + " bytes");
  }
  return Status::Ok();
}

Status LuksFormat(const BlockDevice& device, const std::string& passphrase,
                  const CommandLimits& limits) {
  // --key-file=- reads the whole pipe as the passphrase, newlines included, exactly as open does.
  std::vector<std::string> args = {"luksFormat",     "--batch-mode",    "--type",      "luks2",
                                   "--cipher",       "aes-xts-plain64", "--key-size",  "512",
                                   "--hash",         "sha256",          "--pbkdf",     "argon2id",
                                   "--pbkdf-memory", "65536",           "--iter-time", "2000"};
  if (int sector = LogicalSectorSize(device.node); sector >= 512 && sector <= 4096) {
    args.insert(args.end(), {"--sector-size", std::to_string(sector)});
  }
  args.insert(args.end(), {"--key-file=-", device.node});
  std::vector<std::string> argv = Cryptsetup(args);
  auto run = RunWithPassphrase(argv, limits.format, passphrase);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) return Internal("encrypting failed: " + DescribeFailure(argv, *run));
  return Status::Ok();
}

StatusOr<LuksHeader> ReadLuksHeader(const BlockDevice& device, const CommandLimits& limits) {
  std::vector<std::string> argv = Cryptsetup({"luksDump", "--dump-json-metadata", device.node});
  auto run = RunCommand(argv, limits.command);
  if (!run.ok()) return run.status();
  LuksHeader header;
  if (run->exit_code != 0) return header;  // LUKS1: no JSON metadata
  nlohmann::json metadata = nlohmann::json::parse(run->output, nullptr, false);
  if (metadata.is_discarded() || !metadata.is_object() || !metadata.contains("keyslots") ||
      !metadata["keyslots"].is_object()) {
    return Internal("the LUKS2 metadata of " + device.node + " cannot be read");
  }
  header.keyslots = static_cast<int>(metadata["keyslots"].size());
  for (const auto& [id, slot] : metadata["keyslots"].items()) {
    if (!slot.is_object() || !slot.contains("kdf") || !slot["kdf"].is_object()) continue;
    const nlohmann::json& kdf = slot["kdf"];
    if (kdf.contains("memory") && kdf["memory"].is_number_integer()) {
      header.max_kdf_memory_kib = std::max(header.max_kdf_memory_kib, kdf["memory"].get<int64_t>());
    }
  }
  return header;
}

namespace {

Status WrongPassphrase(const BlockDevice& device) {
  return FailedPrecondition("the passphrase does not open this volume (" + device.node +
                            "): check the secret named by the StorageClass's "
                            "csi.storage.k8s.io/node-stage-secret-name");
}

}  // namespace

Status LuksTestPassphrase(const BlockDevice& device, const std::string& passphrase,
                          const CommandLimits& limits) {
  std::vector<std::string> argv =
      Cryptsetup({"open", "--test-passphrase", "--key-file=-", device.node});
  auto run = RunWithPassphrase(argv, limits.command, passphrase);
  if (!run.ok()) return run.status();
  if (run->exit_code == kNoKeyAvailable) return WrongPassphrase(device);
  if (run->exit_code != 0) {
    return Internal("checking the passphrase failed: " + DescribeFailure(argv, *run));
  }
  return Status::Ok();
}

StatusOr<BlockDevice> LuksOpen(const BlockDevice& device, const std::string& name,
                               const std::string& passphrase, const CommandLimits& limits) {
  std::vector<std::string> argv =
      Cryptsetup({"open", "--type", "luks", "--key-file=-", device.node, name});
  auto run = RunWithPassphrase(argv, limits.command, passphrase);
  if (!run.ok()) return run.status();
  if (run->exit_code == kNoKeyAvailable) return WrongPassphrase(device);
  if (run->exit_code != 0) {
    return Internal("opening the encrypted volume failed: " + DescribeFailure(argv, *run));
  }
  return MapperDevice(name);
}

StatusOr<std::optional<LuksMapping>> FindLuksMapping(const std::string& name,
                                                     const CommandLimits& limits) {
  std::vector<std::string> argv = Cryptsetup({"status", name});
  auto run = RunCommand(argv, limits.command);
  if (!run.ok()) return run.status();
  if (run->exit_code == kDeviceNotActive) return std::optional<LuksMapping>();
  if (run->exit_code != 0) {
    return Internal("reading the encrypted mapping failed: " + DescribeFailure(argv, *run));
  }
  StatusOr<BlockDevice> mapper = MapperDevice(name);
  if (!mapper.ok()) return mapper.status();
  LuksMapping mapping{.mapper = *mapper,
                      .backing_node = StatusField(run->output, "device:"),
                      .backing_number = std::nullopt};
  if (mapping.backing_node.empty()) {
    return Internal("cryptsetup status " + name + " names no device under the mapping");
  }
  mapping.backing_number = DeviceNumberOf(mapping.backing_node);
  return std::optional<LuksMapping>(std::move(mapping));
}

Status LuksClose(const std::string& name, const CommandLimits& limits) {
  std::vector<std::string> argv = Cryptsetup({"close", name});
  auto run = RunCommand(argv, limits.command);
  if (!run.ok()) return run.status();
  if (run->exit_code == 0 || run->exit_code == kDeviceNotActive) return Status::Ok();
  if (run->exit_code == kDeviceBusy) {
    return FailedPrecondition("the encrypted mapping " + name +
                              " is still in use: " + DescribeFailure(argv, *run));
  }
  return Internal("closing the encrypted mapping failed: " + DescribeFailure(argv, *run));
}

std::vector<std::string> ListPluginMappings() {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(kMapperDir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (IsPluginMapperName(name)) names.push_back(std::move(name));
  }
  return names;
}

}  // namespace oxide::node
