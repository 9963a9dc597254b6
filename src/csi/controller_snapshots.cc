// ControllerService: CreateSnapshot, DeleteSnapshot, ListSnapshots and GetSnapshot. Snapshot ids
// are Oxide snapshot ids; a CreateSnapshot answers ready_to_use = false when Oxide is still
// creating the snapshot as the call's deadline nears, and the SnapshotEngine keeps tracking it.
// ListSnapshots shows every snapshot of the project, whoever made it, straight from Oxide;
// GetSnapshot is one Oxide GET. Loop thread only.
#include <google/protobuf/util/time_util.h>

#include <algorithm>

#include "config/validation.h"
#include "csi/controller_service.h"
#include "csi/paged_listing.h"
#include "csi/request_checks.h"
#include "engine/disk_naming.h"

namespace oxide::csi_adapter {
namespace {

using backend::Snapshot;

// A CreateSnapshot waits at most this long for Oxide to report the snapshot ready, and never
// more than 3/4 of the time to the call's deadline; then it answers ready_to_use = false.
constexpr std::chrono::seconds kLongestReadinessWait{20};

// The call's deadline is the client's wall time; the answer-by point is on the engine's clock.
Clock::TimePoint AnswerBy(const rpc::CallInfo& info, const Clock& clock) {
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(kLongestReadinessWait);
  if (info.deadline != std::chrono::system_clock::time_point::max()) {
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        info.deadline - std::chrono::system_clock::now());
    wait = std::min(wait, std::max(remaining * 3 / 4, std::chrono::milliseconds(0)));
  }
  return clock.Now() + wait;
}

void FillSnapshot(const Snapshot& snapshot, csi::v1::Snapshot* out) {
  out->set_snapshot_id(snapshot.id);
  out->set_source_volume_id(snapshot.disk_id);
  out->set_size_bytes(static_cast<int64_t>(snapshot.size));
  out->set_ready_to_use(snapshot.state == backend::SnapshotStatus::kReady);
  google::protobuf::Timestamp created;
  if (google::protobuf::util::TimeUtil::FromString(snapshot.time_created, &created)) {
    *out->mutable_creation_time() = created;
  }
}

}  // namespace

void ControllerService::CreateSnapshot(const rpc::CallInfo& info,
                                       const csi::v1::CreateSnapshotRequest& request,
                                       rpc::Reply<csi::v1::CreateSnapshotResponse> reply) {
  if (Status checked = CheckCreateSnapshot(request); !checked.ok()) return reply.Fail(checked);
  engine::SnapshotSpec spec{.co_name = request.name(),
                            .snapshot_name = engine::SnapshotNameFor(request.name()),
                            .source_volume_id = request.source_volume_id()};
  auto shared = Share(std::move(reply));
  snapshots_->Create(
      spec, AnswerBy(info, snapshots_->clock()), [shared](const engine::SnapshotResult& result) {
        if (!result.ok()) return shared->Fail(result.status());
        if (result->state == backend::SnapshotStatus::kFaulted) {
          return shared->Fail(
              Internal("Oxide reports snapshot " + result->id +
                       " faulted: taking it failed; delete it with DeleteSnapshot and "
                       "take a new one"));
        }
        csi::v1::CreateSnapshotResponse response;
        FillSnapshot(*result, response.mutable_snapshot());
        shared->Ok(std::move(response));
      });
}

void ControllerService::DeleteSnapshot(const rpc::CallInfo&,
                                       const csi::v1::DeleteSnapshotRequest& request,
                                       rpc::Reply<csi::v1::DeleteSnapshotResponse> reply) {
  if (Status checked = CheckDeleteSnapshot(request); !checked.ok()) return reply.Fail(checked);
  // Only Oxide snapshot ids are snapshot ids: anything else cannot exist, so it is deleted.
  if (!IsUuid(request.snapshot_id())) return reply.Ok({});
  auto shared = Share(std::move(reply));
  snapshots_->Delete(request.snapshot_id(), [shared](const engine::SnapshotResult& result) {
    if (!result.ok()) return shared->Fail(result.status());
    shared->Ok({});
  });
}

void ControllerService::ListSnapshots(const rpc::CallInfo&,
                                      const csi::v1::ListSnapshotsRequest& request,
                                      rpc::Reply<csi::v1::ListSnapshotsResponse> reply) {
  using Response = csi::v1::ListSnapshotsResponse;
  StatusOr<std::string> token = CheckListSnapshots(request);
  if (!token.ok()) return reply.Fail(token.status());
  const std::string source = request.source_volume_id();
  auto shared = Share(std::move(reply));
  if (!request.snapshot_id().empty()) {
    if (!IsUuid(request.snapshot_id())) return shared->Ok({});  // no such snapshot: empty list
    oxide_->GetSnapshot(request.snapshot_id(), [shared, source](StatusOr<Snapshot> snapshot) {
      Response response;
      // One of another project is not listed, as in a listing of all.
      if (!snapshot.ok() && snapshot.status().code() != StatusCode::kNotFound &&
          !backend::IsInAnotherProject(snapshot.status())) {
        return shared->Fail(snapshot.status());
      }
      if (snapshot.ok() && (source.empty() || snapshot->disk_id == source)) {
        FillSnapshot(*snapshot, response.add_entries()->mutable_snapshot());
      }
      shared->Ok(std::move(response));
    });
    return;
  }
  auto listing = std::make_shared<PagedListing<Snapshot, Response>>();
  listing->list = [this](const backend::PageRequest& page,
                         backend::Done<backend::Page<Snapshot>> done) {
    oxide_->ListSnapshots(page, std::move(done));
  };
  listing->add = [source](const Snapshot& snapshot, Response* response) {
    if (source.empty() || snapshot.disk_id == source) {
      FillSnapshot(snapshot, response->add_entries()->mutable_snapshot());
    }
  };
  listing->entries = [](const Response& response) { return response.entries_size(); };
  listing->set_next_token = [](Response* response, const std::string& next) {
    response->set_next_token(next);
  };
  listing->done = [shared](StatusOr<Response> listed) {
    if (!listed.ok()) return shared->Fail(listed.status());
    shared->Ok(std::move(*listed));
  };
  ListPages(listing, std::make_shared<Response>(), static_cast<uint32_t>(request.max_entries()),
            *token);
}

void ControllerService::GetSnapshot(const rpc::CallInfo&,
                                    const csi::v1::GetSnapshotRequest& request,
                                    rpc::Reply<csi::v1::GetSnapshotResponse> reply) {
  const std::string id = request.snapshot_id();
  if (Status checked = CheckGetSnapshot(request); !checked.ok()) return reply.Fail(checked);
  auto shared = Share(std::move(reply));
  oxide_->GetSnapshot(id, [shared, id](StatusOr<Snapshot> snapshot) {
    // Another project's snapshot is not this plugin's: to it, no such snapshot exists.
    if (backend::IsInAnotherProject(snapshot.status())) {
      return shared->Fail(
          NotFound("snapshot " + id + " does not exist in the plugin's Oxide project"));
    }
    if (!snapshot.ok()) return shared->Fail(snapshot.status());
    csi::v1::GetSnapshotResponse response;
    FillSnapshot(*snapshot, response.mutable_snapshot());
    shared->Ok(std::move(response));
  });
}

}  // namespace oxide::csi_adapter
