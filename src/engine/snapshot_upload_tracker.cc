#include "engine/snapshot_upload_tracker.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::engine {

SnapshotUploadTracker::SnapshotUploadTracker(Clock* clock, backend::OxideClient* oxide,
                                             store::SnapshotStore* store,
                                             UploadTrackerOptions options)
    : clock_(clock), oxide_(oxide), store_(store), options_(options) {}

SnapshotUploadTracker::~SnapshotUploadTracker() {
  *alive_ = false;
  clock_->CancelTimer(timer_);
}

void SnapshotUploadTracker::PublishCount() const {
  metrics::Families().snapshots_tracked.Set(static_cast<double>(tracked_.size()));
}

void SnapshotUploadTracker::Track(const store::SnapshotRow& row) {
  if (row.snapshot_id.empty() || tracked_.count(row.snapshot_id) != 0) return;
  tracked_.emplace(row.snapshot_id, Tracked{.row = row,
                                            .due = clock_->Now() + options_.first,
                                            .delay = options_.first,
                                            .waiters = {}});
  PublishCount();
  Schedule();
}

bool SnapshotUploadTracker::WhenSettled(const std::string& snapshot_id, Settled done) {
  auto found = tracked_.find(snapshot_id);
  if (found == tracked_.end()) return false;
  found->second.waiters.push_back(std::move(done));
  return true;
}

void SnapshotUploadTracker::Forget(const std::string& snapshot_id) {
  auto found = tracked_.find(snapshot_id);
  if (found == tracked_.end()) return;
  std::vector<Settled> waiters = std::move(found->second.waiters);
  tracked_.erase(found);
  PublishCount();
  for (Settled& waiter : waiters)
    waiter(NotFound("snapshot " + snapshot_id + " was deleted"));
}

void SnapshotUploadTracker::Schedule() {
  if (polling_) return;  // the round in progress schedules the next one when it ends
  clock_->CancelTimer(timer_);
  timer_ = 0;
  if (tracked_.empty()) return;
  Clock::TimePoint earliest = Clock::TimePoint::max();
  for (const auto& [id, tracked] : tracked_)
    earliest = std::min(earliest, tracked.due);
  // Rounds are at least `first` apart: snapshots that become due meanwhile share the next one.
  earliest = std::max(earliest, last_round_ + options_.first);
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(earliest - clock_->Now());
  timer_ = clock_->StartTimer(wait, [this] {
    timer_ = 0;
    Poll();
  });
}

void SnapshotUploadTracker::Poll() {
  if (polling_) return;
  const Clock::TimePoint now = clock_->Now();
  // What falls due before the next round could run is asked now, in this round.
  std::vector<std::string> due;
  for (const auto& [id, tracked] : tracked_) {
    if (tracked.due <= now + options_.first) due.push_back(id);
  }
  if (due.empty()) return Schedule();
  polling_ = true;
  last_round_ = now;
  if (due.size() <= options_.max_single_gets) return GetEach(due);
  ++sweeps_;
  auto unseen = std::make_shared<std::unordered_set<std::string>>();
  for (const auto& [id, tracked] : tracked_)
    unseen->insert(id);
  ListPage("", std::move(unseen));
}

void SnapshotUploadTracker::GetEach(const std::vector<std::string>& ids) {
  gets_outstanding_ = ids.size();
  for (const std::string& id : ids) {
    ++requests_;
    oxide_->GetSnapshot(id, [this, alive = alive_, id](StatusOr<backend::Snapshot> snapshot) {
      if (!*alive) return;
      if (snapshot.ok()) {
        Apply(id, &*snapshot);
      } else if (snapshot.status().code() == StatusCode::kNotFound) {
        Apply(id, nullptr);
      } else {
        Postpone(id, snapshot.status());
      }
      if (--gets_outstanding_ == 0) EndRound();
    });
  }
}

void SnapshotUploadTracker::ListPage(std::string page_token,
                                     std::shared_ptr<std::unordered_set<std::string>> unseen) {
  ++requests_;
  backend::PageRequest page{.limit = options_.page_size, .page_token = page_token};
  oxide_->ListSnapshots(page, [this, alive = alive_, unseen, limit = page.limit](
                                  StatusOr<backend::Page<backend::Snapshot>> listed) {
    if (!*alive) return;
    if (!listed.ok()) {
      for (const std::string& id : *unseen)
        Postpone(id, listed.status());
      return EndRound();
    }
    for (const backend::Snapshot& snapshot : listed->items) {
      if (unseen->erase(snapshot.id) != 0) Apply(snapshot.id, &snapshot);
    }
    if (listed->items.size() >= limit && listed->next_page) {
      return ListPage(*listed->next_page, unseen);
    }
    // The listing was complete: what it did not show is gone.
    for (const std::string& id : *unseen)
      Apply(id, nullptr);
    EndRound();
  });
}

void SnapshotUploadTracker::EndRound() {
  polling_ = false;
  Schedule();
}

void SnapshotUploadTracker::Postpone(const std::string& id, const Status& error) {
  auto found = tracked_.find(id);
  if (found == tracked_.end()) return;
  Tracked& tracked = found->second;
  tracked.delay = std::min(tracked.delay * 2, options_.max);
  tracked.due = clock_->Now() + tracked.delay;
  log::Warn("cannot ask Oxide about a snapshot being created; will ask again",
            {{"snapshot_id", id}, {"error", error.message()}});
}

void SnapshotUploadTracker::Apply(const std::string& id, const backend::Snapshot* seen) {
  auto found = tracked_.find(id);
  if (found == tracked_.end()) return;
  Tracked& tracked = found->second;
  ++tracked.row.polls;
  if (seen != nullptr && seen->state == backend::SnapshotStatus::kCreating) {
    tracked.delay = std::min(tracked.delay * 2, options_.max);
    tracked.due = clock_->Now() + tracked.delay;
    return;
  }
  store::SnapshotRow row = tracked.row;
  if (seen != nullptr) {
    row.state = backend::SnapshotStatusName(seen->state);
    row.size = seen->size;
    store_->Put(row);
  } else {
    store_->Remove(row.snapshot_name);
  }
  log::Info("snapshot upload settled",
            {{"snapshot_id", id},
             {"state", seen != nullptr ? backend::SnapshotStatusName(seen->state) : "deleted"},
             {"polls", std::to_string(row.polls)}});
  std::vector<Settled> waiters = std::move(tracked.waiters);
  tracked_.erase(found);
  PublishCount();
  StatusOr<backend::Snapshot> result =
      seen != nullptr ? StatusOr<backend::Snapshot>(*seen)
                      : StatusOr<backend::Snapshot>(NotFound("snapshot " + id + " is gone"));
  for (Settled& waiter : waiters)
    waiter(result);
}

}  // namespace oxide::engine
