#include "engine/clone_snapshot_sweep.h"

#include <algorithm>
#include <utility>

#include "engine/disk_naming.h"
#include "engine/journal_entry.h"
#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

// Days from 1970-01-01 to the given civil date (proleptic Gregorian; H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// `count` decimal digits at text[*at], advancing *at; nullopt when they are not all digits.
std::optional<int64_t> Digits(std::string_view text, size_t* at, size_t count) {
  if (*at + count > text.size()) return std::nullopt;
  int64_t value = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[*at + i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  *at += count;
  return value;
}

bool Expect(std::string_view text, size_t* at, char c) {
  if (*at >= text.size() || (text[*at] != c && !(c == 'T' && text[*at] == 't'))) return false;
  ++*at;
  return true;
}

}  // namespace

std::chrono::milliseconds CloneSweepPeriodFor(std::chrono::milliseconds max_age) {
  return std::clamp<std::chrono::milliseconds>(max_age / 2, std::chrono::seconds(1),
                                               std::chrono::minutes(5));
}

std::optional<int64_t> ParseRfc3339Millis(std::string_view text) {
  size_t at = 0;
  auto year = Digits(text, &at, 4);
  if (!year || !Expect(text, &at, '-')) return std::nullopt;
  auto month = Digits(text, &at, 2);
  if (!month || !Expect(text, &at, '-')) return std::nullopt;
  auto day = Digits(text, &at, 2);
  if (!day || !Expect(text, &at, 'T')) return std::nullopt;
  auto hour = Digits(text, &at, 2);
  if (!hour || !Expect(text, &at, ':')) return std::nullopt;
  auto minute = Digits(text, &at, 2);
  if (!minute || !Expect(text, &at, ':')) return std::nullopt;
  auto second = Digits(text, &at, 2);
  if (!second) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 ||
      *second > 60) {
    return std::nullopt;
  }
  int64_t millis = 0;
  if (at < text.size() && text[at] == '.') {
    ++at;
    size_t digits = 0;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      if (digits < 3) millis = millis * 10 + (text[at] - '0');
      ++digits;
      ++at;
    }
    if (digits == 0) return std::nullopt;
    for (size_t i = digits; i < 3; ++i)
      millis *= 10;
  }
  int64_t offset_minutes = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const int sign = text[at] == '-' ? -1 : 1;
    ++at;
    auto off_hour = Digits(text, &at, 2);
    if (!off_hour || !Expect(text, &at, ':')) return std::nullopt;
    auto off_minute = Digits(text, &at, 2);
    if (!off_minute || *off_hour > 23 || *off_minute > 59) return std::nullopt;
    offset_minutes = sign * (*off_hour * 60 + *off_minute);
  } else {
    return std::nullopt;
  }
  if (at != text.size()) return std::nullopt;
  const int64_t seconds = DaysFromCivil(*year, *month, *day) * 86400 + *hour * 3600 + *minute * 60 +
                          *second - offset_minutes * 60;
  return seconds * 1000 + millis;
}

struct CloneSnapshotSweep::Run {
  Result result;
  std::vector<backend::Snapshot> candidates;
  std::vector<std::function<void(const Result&)>> waiters;
};

CloneSnapshotSweep::CloneSnapshotSweep(Clock* clock, backend::OxideClient* oxide,
                                       store::Journal* journal, CloneSweepOptions options)
    : clock_(clock), oxide_(oxide), journal_(journal), options_(options) {}

CloneSnapshotSweep::~CloneSnapshotSweep() {
  *alive_ = false;
  if (timer_ != 0) clock_->CancelTimer(timer_);
}

void CloneSnapshotSweep::Start() {
  affinity_.Check("CloneSnapshotSweep::Start");
  periodic_ = true;
  SweepNow();
}

void CloneSnapshotSweep::SweepNow(std::function<void(const Result&)> done) {
  affinity_.Check("CloneSnapshotSweep::SweepNow");
  if (running_) {
    if (done) running_->waiters.push_back(std::move(done));
    return;
  }
  if (timer_ != 0) clock_->CancelTimer(std::exchange(timer_, 0));
  running_ = std::make_shared<Run>();
  if (done) running_->waiters.push_back(std::move(done));
  ListPage(running_, "");
}

std::unordered_set<std::string> CloneSnapshotSweep::Protected() const {
  std::unordered_set<std::string> names;
  for (const store::OperationRow& row : journal_->UnfinishedOperations()) {
    if (row.kind != OperationKindName(OperationKind::kCreate)) continue;
    JournalEntry entry = ReadJournalEntry(row);
    if (!entry.temp_snapshot.empty()) names.insert(std::move(entry.temp_snapshot));
  }
  return names;
}

void CloneSnapshotSweep::ListPage(const std::shared_ptr<Run>& run, std::string page_token) {
  backend::PageRequest page{.limit = options_.page_size, .page_token = std::move(page_token)};
  oxide_->ListSnapshots(page, [this, alive = alive_,
                               run](StatusOr<backend::Page<backend::Snapshot>> listed) {
    if (!*alive) return;
    if (!listed.ok()) {
      log::Warn("could not list snapshots to sweep clones' temporary snapshots; trying again later",
                {{"error", listed.status().message()}});
      run->result.listed = false;
      run->candidates.clear();
      return EndRun(run);
    }
    const int64_t now_ms = clock_->WallMillis();
    const int64_t max_age_ms = options_.max_age.count();
    for (backend::Snapshot& snapshot : listed->items) {
      if (!IsCloneSnapshot(snapshot.name, snapshot.description)) continue;
      ++run->result.seen;
      std::optional<int64_t> created = ParseRfc3339Millis(snapshot.time_created);
      if (!created) {
        log::Warn("a clone's temporary snapshot has a creation time that cannot be read; kept",
                  {{"snapshot", snapshot.name}, {"time_created", snapshot.time_created}});
        ++run->result.kept;
        continue;
      }
      // Still being taken: Oxide refuses its delete, and its clone may be under way.
      if (now_ms - *created < max_age_ms || snapshot.state == backend::SnapshotStatus::kCreating) {
        ++run->result.kept;
        continue;
      }
      run->candidates.push_back(std::move(snapshot));
    }
    // An empty page ends the listing (next_page is set whenever items is non-empty).
    if (listed->items.empty() || !listed->next_page || listed->next_page->empty()) {
      return DeleteNext(run);
    }
    ListPage(run, *listed->next_page);
  });
}

void CloneSnapshotSweep::DeleteNext(const std::shared_ptr<Run>& run) {
  if (run->candidates.empty()) return EndRun(run);
  backend::Snapshot snapshot = std::move(run->candidates.back());
  run->candidates.pop_back();
  // Asked again at each delete: a clone of this replica may have begun since the listing.
  if (Protected().count(snapshot.name) != 0) {
    ++run->result.kept;
    return DeleteNext(run);
  }
  const std::string id = snapshot.id;
  oxide_->DeleteSnapshot(
      id, [this, alive = alive_, run, snapshot = std::move(snapshot)](Status deleted) {
        if (!*alive) return;
        const int64_t age_s =
            (clock_->WallMillis() - ParseRfc3339Millis(snapshot.time_created).value_or(0)) / 1000;
        if (deleted.ok()) {
          ++run->result.deleted;
          ++deleted_total_;
          metrics::Families().orphan_snapshots_deleted.Increment();
          log::Info("deleted a clone's temporary snapshot that no operation uses any more",
                    {{"snapshot", snapshot.name},
                     {"snapshot_id", snapshot.id},
                     {"source_volume_id", snapshot.disk_id},
                     {"age_s", log::Num(age_s)}});
        } else if (deleted.code() != StatusCode::kNotFound) {
          ++run->result.kept;
          log::Warn("could not delete a clone's leftover temporary snapshot; trying again later",
                    {{"snapshot", snapshot.name},
                     {"snapshot_id", snapshot.id},
                     {"error", deleted.message()}});
        }
        DeleteNext(run);
      });
}

void CloneSnapshotSweep::EndRun(const std::shared_ptr<Run>& run) {
  ++sweeps_;
  running_.reset();
  const Result& result = run->result;
  log::Write(result.deleted > 0 ? log::Level::kInfo : log::Level::kDebug,
             "swept clones' temporary snapshots",
             {{"seen", log::Num(static_cast<uint64_t>(result.seen))},
              {"deleted", log::Num(static_cast<uint64_t>(result.deleted))},
              {"kept", log::Num(static_cast<uint64_t>(result.kept))},
              {"listed", log::Bool(result.listed)}});
  if (periodic_) {
    timer_ = clock_->StartTimer(options_.period, [this, alive = alive_] {
      if (!*alive) return;
      timer_ = 0;
      SweepNow();
    });
  }
  for (auto& waiter : run->waiters)
    waiter(result);
}

}  // namespace oxide::engine
