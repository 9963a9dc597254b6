// The filesystem options of a volume (inodeSize, bytesPerInode, numberOfInodes, ext4BigAlloc,
// ext4ClusterSize, fsBlockSize): checked among CreateVolume's parameters against the requested
// capabilities' filesystem type and carried to the node in volume_context, then checked again
// from volume_context against NodeStageVolume's capability (a volume_context from another
// controller or a hand-made PersistentVolume is untrusted). The accepted values, per filesystem,
// are listed in docs/csi-behaviour.md. Pure functions: any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "csi.pb.h"
#include "csi/node_requests.h"
#include "node/filesystem_options.h"
#include "util/status.h"

namespace oxide::csi_adapter {

using StringMap = google::protobuf::Map<std::string, std::string>;

// True for the six option keys (ParseParameters leaves them to this file).
bool IsFilesystemOptionKey(const std::string& key);

// The options among `entries` for a `fs_type` ("ext4" or "xfs"; "" for a block volume, to which
// none applies). INVALID_ARGUMENT naming the key, its value and what is accepted for a value out
// of range, a key that does not apply to `fs_type`, ext4ClusterSize without ext4BigAlloc=true, or
// numberOfInodes together with bytesPerInode. `source` names where the entries came from in the
// message ("parameter", "volume_context").
StatusOr<node::FilesystemOptions> ParseFilesystemOptions(const StringMap& entries,
                                                         const std::string& fs_type,
                                                         const char* source);

// CreateVolume (and ValidateVolumeCapabilities): the options among `parameters`, valid for every
// capability (a mount capability's fs_type, ext4 when empty; any option with a block capability
// is INVALID_ARGUMENT), and an fsBlockSize not below the Oxide disk's block size
// `disk_block_size`. Returns the volume_context entries that carry them (canonical values; empty
// without options).
StatusOr<std::map<std::string, std::string>> CheckFilesystemParameters(
    const StringMap& parameters,
    const google::protobuf::RepeatedPtrField<csi::v1::VolumeCapability>& capabilities,
    uint64_t disk_block_size);

// The volume_context entries that carry `options` (the keys above, canonical values).
std::map<std::string, std::string> FilesystemOptionsContext(const node::FilesystemOptions& options);

// NodeStageVolume: the options in `volume_context`, valid for `capability` (its own fs_type,
// which may differ from what the controller checked).
StatusOr<node::FilesystemOptions> FilesystemOptionsFromContext(const StringMap& volume_context,
                                                               const CapabilitySpec& capability);

}  // namespace oxide::csi_adapter
