// How CSI names map to Oxide names: a volume's deterministic disk name, whose first 20 bytes (the
// NVMe serial the guest sees) are unique, a snapshot's name, and the name of a clone's temporary
// snapshot; descriptions record the CSI name so a name collision is detected and a fresh replica
// recognises what is its own. Pure: any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace oxide::engine {

inline constexpr size_t kNvmeSerialBytes = 20;
inline constexpr size_t kMaxCoNameBytes = 256;

// "csi-" + 16 hex digits of SHA-256(co_name) (20 bytes), then "-" and a readable part of the CO
// name when one survives Oxide's name rules; at most 63 characters.
std::string DiskNameFor(std::string_view co_name);
std::string NvmeSerialOf(std::string_view disk_name);
// True for names DiskNameFor() produces.
bool IsPluginDiskName(std::string_view disk_name);

// `oxide-csi volume "<co_name>"` plus ` for pvc <namespace>/<name>` when known.
std::string DescriptionFor(std::string_view co_name, std::string_view pvc_namespace,
                           std::string_view pvc_name);
// The CO name recorded by DescriptionFor(), if the description is one of ours.
std::optional<std::string> CoNameFromDescription(std::string_view description);
// DescriptionFor() plus ` cloned from volume <source id>`, and that id read back.
std::string CloneDescriptionFor(std::string_view co_name, std::string_view pvc_namespace,
                                std::string_view pvc_name, std::string_view source_volume_id);
std::optional<std::string> ClonedFromDescription(std::string_view description);

// "csi-snap-" + 16 hex digits of SHA-256(co_name) + a readable part: a CSI snapshot's Oxide name.
std::string SnapshotNameFor(std::string_view co_name);
// `oxide-csi snapshot "<co_name>"`, and the CO name read back from it.
std::string SnapshotDescriptionFor(std::string_view co_name);
std::optional<std::string> CoNameFromSnapshotDescription(std::string_view description);
// "csi-clone-" + hash of the target volume's CO name: the temporary snapshot a clone is made from.
std::string CloneSnapshotNameFor(std::string_view target_co_name);
std::string CloneSourceDescriptionFor(std::string_view target_co_name);
// True when `name` and `description` are those of a clone's temporary snapshot: the description
// is CloneSourceDescriptionFor(target) and the name CloneSnapshotNameFor(target). A snapshot
// someone merely named csi-clone-* is not one.
bool IsCloneSnapshot(std::string_view name, std::string_view description);

}  // namespace oxide::engine
