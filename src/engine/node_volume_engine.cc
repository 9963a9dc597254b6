#include "engine/node_volume_engine.h"

#include <chrono>

#include "engine/blocking_work.h"
#include "engine/node_reconciler.h"
#include "engine/node_volume_rows.h"
#include "metrics/plugin_metrics.h"
#include "node/path_rules.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

using store::PublicationRow;
using store::StagingRow;

// What Move() needs of each kind of row: how an error names it, and how it is written (`keep`)
// or deleted.
std::string Named(const StagingRow& row) {
  return "volume " + row.volume_id;
}

std::string Named(const PublicationRow& row) {
  return "target " + row.target_path;
}

void Record(store::NodeVolumeStore* store, const StagingRow& row, bool keep) {
  if (keep) {
    store->PutStaging(row);
  } else {
    store->DeleteStaging(row.volume_id);
  }
}

void Record(store::NodeVolumeStore* store, const PublicationRow& row, bool keep) {
  if (keep) {
    store->PutPublication(row);
  } else {
    store->DeletePublication(row.target_path);
  }
}

// Callers that may wait for one measurement; more are answered at once that it is stuck.
constexpr size_t kMaxMeasurementJoiners = 8;

Status DatabaseFailed(const Status& committed) {
  return Unavailable("the node's state database failed: " + committed.message());
}

}  // namespace

NodeVolumeEngine::NodeVolumeEngine(uv_loop_t* loop, node::NodeOs* os, DeviceWaiter* waiter,
                                   store::NodeVolumeStore* store, store::GroupCommit* commit,
                                   int max_concurrent_formats)
    : loop_(loop),
      os_(os),
      waiter_(waiter),
      store_(store),
      commit_(commit),
      formats_(max_concurrent_formats) {}

NodeVolumeEngine::~NodeVolumeEngine() {
  *alive_ = false;
}

void NodeVolumeEngine::Run(const std::string& volume_id, const std::string& kind,
                           const std::string& fingerprint, Done done,
                           const std::function<void(Done)>& start) {
  switch (tracker_.Admit(volume_id, kind, fingerprint, std::move(done))) {
    case Tracker::Admission::kStart:
      break;
    case Tracker::Admission::kJoined:
      log::Info("call joined the identical operation in flight",
                {{"volume_id", volume_id}, {"operation", kind}});
      return;
    case Tracker::Admission::kRejected:
      return;
  }
  start([this, volume_id](const Status& outcome) { tracker_.Finish(volume_id, outcome); });
}

template <typename Row>
Status NodeVolumeEngine::Move(Row& row, NodeVolumeEvent event) {
  StatusOr<NodeRowState> next = NextNodeState(RowStateOf(row.state), event);
  if (!next.ok()) return Internal(next.status().message() + " (" + Named(row) + ")");
  row.state = *next ? NodeVolumeStateName(**next) : "";
  Record(store_, row, next->has_value());
  return Status::Ok();
}

// Both kinds of row move from the stage and publish steps (node_volume_stage.cc,
// node_volume_publish.cc).
template Status NodeVolumeEngine::Move<StagingRow>(StagingRow& row, NodeVolumeEvent event);
template Status NodeVolumeEngine::Move<PublicationRow>(PublicationRow& row, NodeVolumeEvent event);

void NodeVolumeEngine::CorrectStagedDevice(const std::string& volume_id,
                                           const node::BlockDevice& found) {
  std::optional<StagingRow> row = store_->GetStaging(volume_id);
  if (!row || SameDevice(*row, found)) return;
  log::Warn("the volume's device is not the one its row remembers: the row is corrected",
            {{"volume_id", volume_id},
             {"serial", row->serial},
             {"was", row->device_name + " " + row->device_number},
             {"now", found.name + " " + found.Number()}});
  row->device_name = found.name;
  row->device_number = found.Number();
  store_->PutStaging(*row);
}

void NodeVolumeEngine::WhenDurable(Done finish, std::function<void()> next) {
  commit_->WhenDurable(
      [alive = alive_, finish = std::move(finish), next = std::move(next)](Status committed) {
        if (!*alive) return;
        if (committed.ok()) return next();
        finish(DatabaseFailed(committed));
      });
}

void NodeVolumeEngine::AnswerWhenDurable(Done finish, Status outcome) {
  commit_->WhenDurable(
      [alive = alive_, finish = std::move(finish), outcome = std::move(outcome)](Status committed) {
        if (!*alive) return;
        if (!outcome.ok()) return finish(outcome);
        finish(committed.ok() ? Status::Ok() : DatabaseFailed(committed));
      });
}

NodeVolumeEngine::Done NodeVolumeEngine::Timed(const char* operation, Done done) {
  // A latency measurement for the metrics: real time, not the injected clock.
  return [operation, started = std::chrono::steady_clock::now(),
          done = std::move(done)](const Status& status) {
    metrics::Families()
        .node_operation_duration.With({operation, StatusCodeName(status.code())})
        .Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    done(status);
  };
}

// ---- Health ----

void NodeVolumeEngine::Health(const std::string& volume_id, const std::string& path,
                              std::function<void(StatusOr<VolumeHealth>)> done) {
  affinity_.Check("NodeVolumeEngine::Health");
  std::optional<StagingRow> staging = store_->GetStaging(volume_id);
  std::optional<PublicationRow> publication = store_->GetPublication(path);
  const bool published = publication && publication->volume_id == volume_id &&
                         publication->state != store::kUnpublishing;
  const bool staged_here = staging && staging->staging_path == path;
  if ((!published && !staged_here) || !staging || staging->state == store::kFormatting) {
    return done(NotFound("volume " + volume_id + " is neither published nor staged at " + path));
  }
  if (Status checked = node::CheckVolumePath("volume_path", path); !checked.ok()) {
    return done(checked);
  }
  const bool expect_mount = published || !staging->block;
  const bool readonly = published && publication->readonly;
  const std::string key =
      volume_id + "\n" + path + (expect_mount ? "\nmounted" : "\n") + (readonly ? "\nro" : "\nrw");
  auto [waiting, first] = measuring_.try_emplace(key);
  if (!first && waiting->second.size() >= kMaxMeasurementJoiners) {
    // A measurement that long in flight is stuck on the device: say so, and hold no more callers.
    VolumeHealth stuck;
    stuck.problem = "a measurement of this volume has not finished and " +
                    std::to_string(waiting->second.size()) +
                    " calls wait for it: its device or filesystem may be hung";
    return done(stuck);
  }
  waiting->second.push_back(std::move(done));
  if (!first) return;  // joins the measurement under way
  RunBlocking(
      loop_,
      [os = os_, serial = staging->serial, encrypted = staging->encrypted, block = staging->block,
       path, expect_mount, readonly]() -> StatusOr<VolumeHealth> {
        return os->MeasureVolume(serial, encrypted, block, path, expect_mount, readonly);
      },
      [this, alive = alive_, key](StatusOr<VolumeHealth> health) {
        if (!*alive) return;
        auto waiters = measuring_.extract(key);
        for (auto& waiter : waiters.mapped())
          waiter(health);
      });
}

}  // namespace oxide::engine
