#include "engine/disk_naming.h"

#include <nlohmann/json.hpp>

#include "util/sha256.h"

namespace oxide::engine {
namespace {

constexpr std::string_view kNamePrefix = "csi-";
constexpr size_t kHashDigits = 16;
constexpr size_t kMaxDiskName = 63;
constexpr std::string_view kDescriptionPrefix = "oxide-csi volume ";

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

}  // namespace

std::string DiskNameFor(std::string_view co_name) {
  std::string name(kNamePrefix);
  name += Sha256Hex(co_name).substr(0, kHashDigits);
  std::string readable = ReadablePart(co_name, kMaxDiskName - name.size() - 1);
  if (!readable.empty()) name += "-" + readable;
  return name;
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

std::string DescriptionFor(std::string_view co_name, std::string_view pvc_namespace,
                           std::string_view pvc_name) {
  std::string description(kDescriptionPrefix);
  description += nlohmann::json(std::string(co_name)).dump();
  if (!pvc_name.empty()) {
    description += " for pvc ";
    description += pvc_namespace;
    description += "/";
    description += pvc_name;
  }
  return description;
}

std::optional<std::string> CoNameFromDescription(std::string_view description) {
  if (description.substr(0, kDescriptionPrefix.size()) != kDescriptionPrefix) return std::nullopt;
  std::string_view rest = description.substr(kDescriptionPrefix.size());
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

}  // namespace oxide::engine
