#include "disk_rules.h"

#include "api_result.h"
#include "clock.h"
#include "ids.h"

namespace oxide_sim {
namespace {

constexpr uint64_t kMaxDistributed = 1023 * kGiB;
constexpr uint64_t kMaxLocal = 10ULL * 1024 * 1024 * kGiB;  // 10 PiB

oxide::StatusOr<uint32_t> ReadBlockSize(ObjectReader& reader) {
  uint64_t value = 0;
  SIM_ASSIGN_OR_RETURN(value, reader.U64("block_size", "u32"));
  if (value != 512 && value != 2048 && value != 4096) {
    return BodyError("invalid block size " + std::to_string(value));
  }
  return static_cast<uint32_t>(value);
}

oxide::Status ReadSource(const nlohmann::json& value, DiskCreateParams* params) {
  SIM_ASSIGN_OR_RETURN(ObjectReader source, ObjectReader::Open(value, "DiskSource"));
  SIM_ASSIGN_OR_RETURN(params->source,
                       source.Variant("type", {"blank", "snapshot", "image", "importing_blocks"}));
  if (params->source == "blank" || params->source == "importing_blocks") {
    SIM_ASSIGN_OR_RETURN(params->block_size, ReadBlockSize(source));
  } else {
    const std::string id_key = params->source + "_id";
    SIM_ASSIGN_OR_RETURN(params->source_id, source.Uuid(id_key));
    SIM_ASSIGN_OR_RETURN(params->read_only, source.Boolean("read_only", false));
  }
  return source.Finish();
}

}  // namespace

oxide::StatusOr<DiskCreateParams> ReadDiskCreate(ObjectReader& reader) {
  DiskCreateParams params;
  SIM_ASSIGN_OR_RETURN(params.name, reader.Name("name"));
  SIM_ASSIGN_OR_RETURN(params.description, reader.Description("description"));
  SIM_ASSIGN_OR_RETURN(params.size, reader.U64("size"));
  const nlohmann::json* backend_value = reader.Raw("disk_backend");
  if (backend_value == nullptr) return BodyError("missing field `disk_backend`");
  SIM_ASSIGN_OR_RETURN(ObjectReader backend, ObjectReader::Open(*backend_value, "DiskBackend"));
  SIM_ASSIGN_OR_RETURN(params.backend, backend.Variant("type", {"local", "distributed"}));
  if (params.backend == "distributed") {
    const nlohmann::json* source = backend.Raw("disk_source");
    if (source == nullptr) return BodyError("missing field `disk_source`");
    SIM_RETURN_IF_ERROR(ReadSource(*source, &params));
  }
  SIM_RETURN_IF_ERROR(backend.Finish());
  return params;
}

void check_storage_quota(const Model& model, uint64_t adding) {
  if (model.provisioned_storage() + adding > model.quota.storage) {
    throw insufficient_capacity(
        "Storage Limit Exceeded: Not enough storage to complete request. Either remove unneeded "
        "disks and snapshots to free up resources or contact the rack operator to request a "
        "capacity increase.");
  }
}

Disk plan_new_disk(Model& model, const Project& project, const DiskCreateParams& params,
                   uint64_t extra_storage) {
  Disk disk;
  disk.block_size = params.block_size;
  if (params.source == "snapshot") {
    Snapshot* snapshot = model.snapshot(params.source_id);
    if (snapshot == nullptr) throw object_not_found("snapshot", false, params.source_id);
    if (snapshot->project_id != project.id) {
      throw invalid_request("snapshot does not belong to this project");
    }
    if (params.read_only && params.size != snapshot->size) {
      throw invalid_request("read-only disk size " + std::to_string(params.size) +
                            " must be equal to source snapshot size " +
                            std::to_string(snapshot->size));
    }
    if (params.size < snapshot->size) {
      throw invalid_request("disk size " + std::to_string(params.size) +
                            " must be greater than or equal to snapshot size " +
                            std::to_string(snapshot->size));
    }
    disk.block_size = snapshot->block_size;
    disk.snapshot_id = snapshot->id;
  } else if (params.source == "image") {
    // The simulator has no images.
    throw object_not_found("image", false, params.source_id);
  }
  if (params.backend == "local") disk.block_size = 4096;
  if (params.size % disk.block_size != 0) {
    throw invalid_value("size and block_size", "total size must be a multiple of block size " +
                                                   std::to_string(disk.block_size));
  }
  if (params.size < kGiB) throw invalid_value("size", "total size must be at least 1 GiB");
  if (params.size % kGiB != 0)
    throw invalid_value("size", "total size must be a multiple of 1 GiB");
  if (params.backend == "distributed" && params.size > kMaxDistributed) {
    throw invalid_value("size", "total size must be less than 1023 GiB");
  }
  if (params.backend == "local" && params.size > kMaxLocal) {
    throw invalid_value("size", "requested size over 10 PiB");
  }
  if (params.backend == "local" && model.physical_disk_bytes != 0 &&
      params.size > model.physical_disk_bytes) {
    throw invalid_value("size", "requested size is too large to fit on any physical disk");
  }
  check_storage_quota(model, params.size + extra_storage);
  if (model.disk_named(project.id, params.name) != nullptr) {
    throw already_exists("disk", params.name);
  }
  disk.id = new_uuid();
  disk.name = params.name;
  disk.description = params.description;
  disk.project_id = project.id;
  disk.size = params.size;
  disk.disk_type = params.backend;
  disk.read_only = params.read_only;
  disk.state = params.read_only ? "detached" : "creating";
  disk.time_created = now_rfc3339();
  disk.time_modified = disk.time_created;
  return disk;
}

}  // namespace oxide_sim
