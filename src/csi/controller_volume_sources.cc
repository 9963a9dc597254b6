// ControllerService: CreateVolume with a volume_content_source. A snapshot source is restored (the
// new disk is made from the Oxide snapshot, which must be ready); a volume source is cloned (the
// VolumeEngine snapshots it into a temporary snapshot first). The new volume is at least as big
// as its source and inherits its block size. A local volume is never a source (INVALID_ARGUMENT:
// Oxide cannot snapshot it). Loop thread only.
#include "config/validation.h"
#include "csi/controller_service.h"
#include "csi/volume_request.h"
#include "engine/disk_naming.h"

namespace oxide::csi_adapter {
namespace {

std::string Bytes(uint64_t bytes) {
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  return std::to_string(bytes) + " bytes";
}

// Grows the volume to its source's size; OUT_OF_RANGE when limit_bytes forbids that.
Status FitSource(engine::CreateSpec* spec, uint64_t source_size, const std::string& what) {
  if (spec->limit > 0 && source_size > spec->limit) {
    return Status(StatusCode::kOutOfRange, what + " holds " + Bytes(source_size) +
                                               ", more than capacity_range.limit_bytes (" +
                                               Bytes(spec->limit) +
                                               "); a volume made from it needs at least that size");
  }
  spec->size = std::max(spec->size, source_size);
  return Status::Ok();
}

}  // namespace

void ControllerService::CreateFromSource(engine::CreateSpec spec,
                                         const csi::v1::VolumeContentSource& source,
                                         const std::string& fingerprint, SharedCreateReply reply,
                                         std::map<std::string, std::string> context) {
  spec.block_size_requested = false;  // a restored or cloned disk has its source's block size
  // The filesystem options travel too; the node mounts the source's filesystem as it is.
  engine::OperationWaiter answer = VolumeAnswer(reply, source, std::move(context));
  if (source.has_snapshot()) {
    const std::string id = source.snapshot().snapshot_id();
    if (id.empty())
      return reply->Fail(InvalidArgument("volume_content_source.snapshot.snapshot_id is required"));
    Status missing = NotFound("snapshot " + id + " (volume_content_source) does not exist");
    if (!IsUuid(id)) return reply->Fail(missing);
    spec.snapshot_id = id;
    oxide_->GetSnapshot(id, [this, spec, fingerprint, answer, missing,
                             id](StatusOr<backend::Snapshot> snapshot) mutable {
      if (!snapshot.ok()) {
        if (snapshot.status().code() == StatusCode::kNotFound) {
          return AnswerExisting(spec, missing, answer);
        }
        return answer(snapshot.status());
      }
      if (snapshot->state == backend::SnapshotStatus::kFaulted) {
        return answer(FailedPrecondition("Oxide reports snapshot " + id +
                                         " faulted; a volume cannot be restored from it"));
      }
      if (snapshot->state != backend::SnapshotStatus::kReady) {
        return answer(Unavailable("snapshot " + id + " is still being created (" +
                                  backend::SnapshotStatusName(snapshot->state) +
                                  "); retry once it is ready to use"));
      }
      Status fits = FitSource(&spec, snapshot->size, "snapshot " + id);
      if (!fits.ok()) return answer(fits);
      engine_->Create(spec, fingerprint, answer);
    });
    return;
  }
  if (source.has_volume()) {
    const std::string id = source.volume().volume_id();
    if (id.empty())
      return reply->Fail(InvalidArgument("volume_content_source.volume.volume_id is required"));
    Status missing = NotFound("volume " + id + " (volume_content_source) does not exist");
    if (!IsUuid(id)) return reply->Fail(missing);
    spec.clone_source = id;
    oxide_->GetDisk(
        id, [this, spec, fingerprint, answer, missing, id](StatusOr<backend::Disk> disk) mutable {
          if (!disk.ok()) {
            if (disk.status().code() == StatusCode::kNotFound) {
              return AnswerExisting(spec, missing, answer);
            }
            return answer(disk.status());
          }
          if (disk->disk_type == backend::kDiskTypeLocal) {
            // A clone is made from a snapshot of its source, and Oxide snapshots no local disk.
            return answer(InvalidArgument(
                "volume " + id +
                " (volume_content_source) is a local disk and cannot be cloned: Oxide cannot "
                "snapshot local disks, and a clone is made from a snapshot of its source"));
          }
          Status fits = FitSource(&spec, disk->size, "volume " + id);
          if (!fits.ok()) return answer(fits);
          engine_->Create(spec, fingerprint, answer);
        });
    return;
  }
  reply->Fail(InvalidArgument("volume_content_source names neither a snapshot nor a volume"));
}

void ControllerService::AnswerExisting(const engine::CreateSpec& spec, const Status& error,
                                       engine::OperationWaiter answer) {
  oxide_->GetDisk(spec.disk_name, [spec, error, answer](StatusOr<backend::Disk> disk) {
    if (disk.ok() && engine::CoNameFromDescription(disk->description) == spec.co_name &&
        engine::ContentMismatch(spec, *disk).empty()) {
      return answer(*disk);
    }
    answer(error);
  });
}

}  // namespace oxide::csi_adapter
