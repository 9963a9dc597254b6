// Oxide's disk and snapshot states (DiskState and SnapshotState in the API), parsed once where
// an answer is read, so nothing past the backend compares state strings. Pure: any thread.
#pragma once

#include <string_view>

namespace oxide::backend {

// kUnknown is a state this plugin version does not know (a newer Oxide): it counts as neither
// attached nor detached nor settled, so nothing acts on such a disk until Oxide moves it on.
enum class DiskStatus {
  kUnknown,
  kCreating,
  kDetached,
  kImportReady,
  kImportingFromUrl,
  kImportingFromBulkWrites,
  kFinalizing,
  kMaintenance,
  kAttaching,
  kAttached,
  kDetaching,
  kDestroyed,
  kFaulted,
};

enum class SnapshotStatus { kUnknown, kCreating, kReady, kFaulted, kDestroyed };

DiskStatus ParseDiskStatus(std::string_view text);
SnapshotStatus ParseSnapshotStatus(std::string_view text);

// Oxide's own spelling ("attached", "importing_from_url", ...), or "unknown".
const char* DiskStatusName(DiskStatus status);
const char* SnapshotStatusName(SnapshotStatus status);

// The states in which Oxide names the instance that holds the disk.
constexpr bool HoldsInstance(DiskStatus status) {
  return status == DiskStatus::kAttaching || status == DiskStatus::kAttached ||
         status == DiskStatus::kDetaching;
}

}  // namespace oxide::backend
