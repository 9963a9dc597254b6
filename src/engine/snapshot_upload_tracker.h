// Upload tracking: follows every snapshot Oxide still reports `creating` until it is ready,
// faulted or gone, on Clock timers with a per-snapshot backoff (0.5 s doubling up to 30 s), and
// records each change in the snapshots table. When more than a few snapshots are due at once it
// refreshes them all with paged list calls (one request per page of up to 1,000 snapshots)
// instead of one GET each, so the Oxide request rate stays bounded whatever their number: at most
// max(max_single_gets, pages) requests per `first` interval. Loop thread only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/oxide_client.h"
#include "loop/clock.h"
#include "store/snapshot_store.h"

namespace oxide::engine {

struct UploadTrackerOptions {
  std::chrono::milliseconds first{500};
  std::chrono::milliseconds max{30000};
  size_t max_single_gets = 4;  // more snapshots due than this: list them instead
  uint32_t page_size = 1000;
};

class SnapshotUploadTracker {
 public:
  // The snapshot as Oxide reports it once it is no longer `creating`, or NOT_FOUND when it is gone.
  using Settled = std::function<void(const StatusOr<backend::Snapshot>&)>;

  SnapshotUploadTracker(Clock* clock, backend::OxideClient* oxide, store::SnapshotStore* store,
                        UploadTrackerOptions options = {});
  ~SnapshotUploadTracker();
  SnapshotUploadTracker(const SnapshotUploadTracker&) = delete;
  SnapshotUploadTracker& operator=(const SnapshotUploadTracker&) = delete;

  // Starts following a snapshot Oxide reported `creating` (row.snapshot_id set). Idempotent.
  void Track(const store::SnapshotRow& row);
  // `done` runs once the snapshot settles (right away with nothing if it is not tracked: the
  // caller then asks Oxide itself). Returns whether it is tracked.
  bool WhenSettled(const std::string& snapshot_id, Settled done);
  void Forget(const std::string& snapshot_id);

  bool IsTracking(const std::string& snapshot_id) const { return tracked_.count(snapshot_id) != 0; }
  size_t tracking() const { return tracked_.size(); }
  uint64_t requests_sent() const { return requests_; }
  uint64_t list_sweeps() const { return sweeps_; }

 private:
  void PublishCount() const;  // oxide_csi_snapshots_tracked
  struct Tracked {
    store::SnapshotRow row;
    Clock::TimePoint due;
    std::chrono::milliseconds delay;
    std::vector<Settled> waiters;
  };

  void Schedule();
  void Poll();
  void GetEach(const std::vector<std::string>& ids);
  void ListPage(std::string page_token, std::shared_ptr<std::unordered_set<std::string>> unseen);
  void EndRound();
  // Oxide could not be asked: try again later.
  void Postpone(const std::string& id, const Status& error);
  // Applies what Oxide said of a tracked snapshot (nullptr: it is gone).
  void Apply(const std::string& id, const backend::Snapshot* seen);

  Clock* clock_;
  backend::OxideClient* oxide_;
  store::SnapshotStore* store_;
  UploadTrackerOptions options_;
  Clock::TimerId timer_ = 0;  // the next round's; 0: none
  std::unordered_map<std::string, Tracked> tracked_;
  bool polling_ = false;
  Clock::TimePoint last_round_{};
  size_t gets_outstanding_ = 0;
  uint64_t requests_ = 0, sweeps_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace oxide::engine
