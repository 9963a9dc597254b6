#include "backend/oxide_states.h"

#include <array>
#include <cstddef>

namespace oxide::backend {
namespace {

// Indexed by the enums' values.
constexpr std::array<const char*, 13> kDiskNames = {
    "unknown",      "creating",           "detached",
    "import_ready", "importing_from_url", "importing_from_bulk_writes",
    "finalizing",   "maintenance",        "attaching",
    "attached",     "detaching",          "destroyed",
    "faulted"};
constexpr std::array<const char*, 5> kSnapshotNames = {"unknown", "creating", "ready", "faulted",
                                                       "destroyed"};

template <typename Status, size_t N>
Status Parse(const std::array<const char*, N>& names, std::string_view text) {
  for (size_t i = 1; i < N; ++i) {
    if (text == names[i]) return static_cast<Status>(i);
  }
  return static_cast<Status>(0);
}

}  // namespace

DiskStatus ParseDiskStatus(std::string_view text) {
  return Parse<DiskStatus>(kDiskNames, text);
}

SnapshotStatus ParseSnapshotStatus(std::string_view text) {
  return Parse<SnapshotStatus>(kSnapshotNames, text);
}

const char* DiskStatusName(DiskStatus status) {
  return kDiskNames[static_cast<size_t>(status)];
}

const char* SnapshotStatusName(SnapshotStatus status) {
  return kSnapshotNames[static_cast<size_t>(status)];
}

}  // namespace oxide::backend
