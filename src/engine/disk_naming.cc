#include "engine/disk_naming.h"

#include <nlohmann/json.hpp>

#include "util/sha256.h"
#include "util/utf8_cut.h"

namespace oxide::engine {
namespace {

constexpr std::string_view kNamePrefix = "csi-";
constexpr size_t kHashDigits = 16;
constexpr size_t kMaxDiskName = 63;
constexpr std::string_view kDescriptionPrefix = "oxide-csi volume ";
constexpr std::string_view kSnapshotDescriptionPrefix = "oxide-csi snapshot ";
constexpr std::string_view kCloneSourcePrefix = "oxide-csi clone source for volume ";
constexpr std::string_view kClonedFrom = " cloned from volume ";
// Oxide stores a description in at most 512 bytes and refuses a longer one.
constexpr size_t kMaxDescriptionBytes = 512;

std::string ReadablePart(std::string_view co_name, size_t room) {
  std::string out;
  for (char c : co_name) {
    if (out.size() >= room) break;
    char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    bool keep = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9');
    if (keep) {
      out.push_back(lower);
    } else if (!out.empty() && out.back() != '-') {
      out.push_back('-');
    }
  }
  while (!out.empty() && out.back() == '-')
    out.pop_back();
  return out;
}

// `prefix` + hash digits of `co_name` + "-" + as much of a readable form as fits in 63.
std::string HashedName(std::string_view prefix, std::string_view co_name) {
  std::string name(prefix);
  name += Sha256Hex(co_name).substr(0, kHashDigits);
  std::string readable = ReadablePart(co_name, kMaxDiskName - name.size() - 1);
  if (!readable.empty()) name += "-" + readable;
  return name;
}

// The JSON string right after `prefix`, if `text` starts with it.
std::optional<std::string> QuotedAfter(std::string_view text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view rest = text.substr(prefix.size());
  // The JSON string ends at the first unescaped quote after the opening one.
  if (rest.empty() || rest.front() != '"') return std::nullopt;
  for (size_t i = 1; i < rest.size(); ++i) {
    if (rest[i] == '\\') {
      ++i;
    } else if (rest[i] == '"') {
      try {
        return nlohmann::json::parse(rest.substr(0, i + 1)).get<std::string>();
      } catch (const nlohmann::json::exception&) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::string DiskNameFor(std::string_view co_name) {
  return HashedName(kNamePrefix, co_name);
}

std::string SnapshotNameFor(std::string_view co_name) {
  return HashedName("csi-snap-", co_name);
}

std::string CloneSnapshotNameFor(std::string_view target_co_name) {
  return HashedName("csi-clone-", target_co_name);
}

std::string NvmeSerialOf(std::string_view disk_name) {
  return std::string(disk_name.substr(0, kNvmeSerialBytes));
}

bool IsPluginDiskName(std::string_view disk_name) {
  if (disk_name.size() < kNvmeSerialBytes || disk_name.substr(0, 4) != kNamePrefix) return false;
  for (char c : disk_name.substr(4, kHashDigits)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return disk_name.size() == kNvmeSerialBytes || disk_name[kNvmeSerialBytes] == '-';
}

namespace {

// The prefix and the quoted CO name (at most ~270 bytes: CSI names are at most 128 bytes) are
// read back and always kept whole, as is `tail`; the PVC part, only for people, is cut to fit.
std::string FittedDescription(std::string_view co_name, std::string_view pvc_namespace,
                              std::string_view pvc_name, std::string_view tail) {
  std::string description(kDescriptionPrefix);
  description += nlohmann::json(std::string(co_name)).dump();
  if (!pvc_name.empty()) {
    std::string pvc = " for pvc " + std::string(pvc_namespace) + "/" + std::string(pvc_name);
    size_t used = description.size() + tail.size();
    description += CutUtf8(pvc, used < kMaxDescriptionBytes ? kMaxDescriptionBytes - used : 0);
  }
  return description + std::string(tail);
}

}  // namespace

std::string DescriptionFor(std::string_view co_name, std::string_view pvc_namespace,
                           std::string_view pvc_name) {
  return FittedDescription(co_name, pvc_namespace, pvc_name, "");
}

std::optional<std::string> CoNameFromDescription(std::string_view description) {
  return QuotedAfter(description, kDescriptionPrefix);
}

std::string CloneDescriptionFor(std::string_view co_name, std::string_view pvc_namespace,
                                std::string_view pvc_name, std::string_view source_volume_id) {
  return FittedDescription(co_name, pvc_namespace, pvc_name,
                           std::string(kClonedFrom) + std::string(source_volume_id));
}

std::optional<std::string> ClonedFromDescription(std::string_view description) {
  constexpr size_t kUuidLength = 36;
  size_t at = description.rfind(kClonedFrom);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view id = description.substr(at + kClonedFrom.size());
  // The marker ends the description; inside the quoted CO name it would be followed by a quote.
  if (id.size() != kUuidLength || id.find('"') != std::string_view::npos) return std::nullopt;
  return std::string(id);
}

std::string SnapshotDescriptionFor(std::string_view co_name) {
  return std::string(kSnapshotDescriptionPrefix) + nlohmann::json(std::string(co_name)).dump();
}

std::optional<std::string> CoNameFromSnapshotDescription(std::string_view description) {
  return QuotedAfter(description, kSnapshotDescriptionPrefix);
}

std::string CloneSourceDescriptionFor(std::string_view target_co_name) {
  return std::string(kCloneSourcePrefix) + nlohmann::json(std::string(target_co_name)).dump();
}

bool IsCloneSnapshot(std::string_view name, std::string_view description) {
  std::optional<std::string> target = QuotedAfter(description, kCloneSourcePrefix);
  return target && CloneSnapshotNameFor(*target) == name;
}

}  // namespace oxide::engine
