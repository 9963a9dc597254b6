// How a CSI volume name maps to its Oxide disk: a deterministic disk name whose first 20 bytes
// (the NVMe serial the guest sees) are unique, and a description that records the CSI name so a
// name collision is detected and a fresh replica can recognise its volumes. Pure: any thread.
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

}  // namespace oxide::engine
