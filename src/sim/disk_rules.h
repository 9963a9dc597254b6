// DiskCreate parsing and the disk-create checks of README §7, in the server's order.
// Shared by POST /v1/disks and instance create's {"type":"create"} disks. ReadDiskCreate
// returns its errors; the checks (plan_new_disk, check_storage_quota) still throw
// ApiError, caught by CatchModelErrors (model_errors.h). Event-loop thread.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "api_context.h"
#include "json_reader.h"

namespace oxide_sim {

struct DiskCreateParams {
  std::string name, description;
  uint64_t size = 0;
  std::string backend = "distributed";  // distributed | local
  std::string source = "blank";         // blank | snapshot | image | importing_blocks
  uint32_t block_size = 4096;
  std::string source_id;  // snapshot_id or image_id
  bool read_only = false;
};

// Reads a DiskCreate body (or the fields of an InstanceDiskAttachment "create").
// Fails with serde-style detail (json_reader.h); does not throw.
oxide::StatusOr<DiskCreateParams> ReadDiskCreate(ObjectReader& reader);

// Applies checks 1-7 and returns the disk to insert (state and times set). Throws ApiError.
// `extra_storage` is storage already planned in the same request (instance create).
Disk plan_new_disk(Model& model, const Project& project, const DiskCreateParams& params,
                   uint64_t extra_storage = 0);

// The 507 of a quota check, or nothing.
void check_storage_quota(const Model& model, uint64_t adding);

}  // namespace oxide_sim
