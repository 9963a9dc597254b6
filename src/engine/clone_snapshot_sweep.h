// Deletes clones' temporary snapshots that were left behind. A clone snapshots its source into a
// `csi-clone-*` snapshot and deletes it before the operation completes (volume_lifecycle.cc); a
// replica killed or replaced mid-clone, with its journal gone (an emptyDir), leaves it in Oxide
// for good unless the CO retries the same clone. The sweep lists the project's snapshots at start
// and then every `period`, and deletes each temporary clone snapshot (engine/disk_naming.h's
// IsCloneSnapshot: name and description both, never anyone else's snapshot) that is older than
// `max_age` by Oxide's time_created and that no unfinished journal entry of this replica names.
// Another replica's clone in flight is protected by the age alone: keep max_age well above the
// engine's operation limit (docs/replicas.md). Ages compare Oxide's time_created with this
// host's wall clock (Clock::WallMillis): clock skew between the two eats into that margin.
// Loop thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "backend/oxide_client.h"
#include "loop/clock.h"
#include "loop/loop_affinity.h"
#include "store/journal.h"

namespace oxide::engine {

struct CloneSweepOptions {
  std::chrono::milliseconds max_age{std::chrono::minutes(20)};
  // Time between the end of one sweep and the start of the next.
  std::chrono::milliseconds period{std::chrono::minutes(5)};
  uint32_t page_size = 1000;
};

// The period the plugin uses for `max_age`: half of it, between 1 s and 5 min.
std::chrono::milliseconds CloneSweepPeriodFor(std::chrono::milliseconds max_age);

// Milliseconds since the epoch of an RFC 3339 time as Oxide writes it
// ("2026-08-20T17:02:11.482913Z", also with a +hh:mm / -hh:mm offset); nullopt when malformed.
std::optional<int64_t> ParseRfc3339Millis(std::string_view text);

class CloneSnapshotSweep {
 public:
  // What one sweep did.
  struct Result {
    size_t seen = 0;     // temporary clone snapshots listed
    size_t deleted = 0;  // of those, deleted (or gone by the time of the delete)
    size_t kept = 0;     // too young, still creating, or named by an unfinished journal entry
    bool listed = true;  // false when the listing failed (nothing was deleted)
  };

  // Everything passed outlives the sweep.
  CloneSnapshotSweep(Clock* clock, backend::OxideClient* oxide, store::Journal* journal,
                     CloneSweepOptions options = {});
  ~CloneSnapshotSweep();
  CloneSnapshotSweep(const CloneSnapshotSweep&) = delete;
  CloneSnapshotSweep& operator=(const CloneSnapshotSweep&) = delete;

  // Sweeps now, then `period` after each sweep ends.
  void Start();
  // Sweeps now unless a sweep is running (then `done` gets that sweep's result); `done` may be
  // empty.
  void SweepNow(std::function<void(const Result&)> done = nullptr);

  uint64_t sweeps() const { return sweeps_; }
  uint64_t deleted_total() const { return deleted_total_; }

 private:
  struct Run;
  void ListPage(const std::shared_ptr<Run>& run, std::string page_token);
  void DeleteNext(const std::shared_ptr<Run>& run);
  void EndRun(const std::shared_ptr<Run>& run);
  // Temporary snapshot names this replica's unfinished clone entries hold.
  std::unordered_set<std::string> Protected() const;

  Clock* clock_;
  backend::OxideClient* oxide_;
  store::Journal* journal_;
  CloneSweepOptions options_;
  bool periodic_ = false;
  Clock::TimerId timer_ = 0;
  std::shared_ptr<Run> running_;
  uint64_t sweeps_ = 0, deleted_total_ = 0;
  LoopAffinity affinity_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace oxide::engine
