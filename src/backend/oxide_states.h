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

// What an operation may do with a disk in each state (docs/disk-states.md). A disk Oxide does
// not return is "gone" (NOT_FOUND), which no state expresses.
enum class DiskPhase {
  kDetached,      // detached: settled, held by no instance
  kAttached,      // attached: settled, held by state.instance
  kTransitional,  // creating, maintenance, attaching, detaching: Oxide moves it on by itself
  kUnusable,      // faulted, destroyed, the import states, and states this version does not know
};

constexpr DiskPhase PhaseOf(DiskStatus status) {
  switch (status) {
    case DiskStatus::kDetached:
      return DiskPhase::kDetached;
    case DiskStatus::kAttached:
      return DiskPhase::kAttached;
    case DiskStatus::kCreating:
    case DiskStatus::kMaintenance:
    case DiskStatus::kAttaching:
    case DiskStatus::kDetaching:
      return DiskPhase::kTransitional;
    case DiskStatus::kUnknown:
    case DiskStatus::kImportReady:
    case DiskStatus::kImportingFromUrl:
    case DiskStatus::kImportingFromBulkWrites:
    case DiskStatus::kFinalizing:
    case DiskStatus::kDestroyed:
    case DiskStatus::kFaulted:
      return DiskPhase::kUnusable;
  }
  return DiskPhase::kUnusable;
}

// The states in which Oxide names the instance that holds the disk.
constexpr bool HoldsInstance(DiskStatus status) {
  return status == DiskStatus::kAttaching || status == DiskStatus::kAttached ||
         status == DiskStatus::kDetaching;
}

}  // namespace oxide::backend
