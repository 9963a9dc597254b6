// The sweep of clones' leftover temporary snapshots (engine/clone_snapshot_sweep.h) against the
// real simulator: only csi-clone-* snapshots that are the plugin's (name and description), older
// than the maximum age by Oxide's time_created and named by no unfinished journal entry are
// deleted; at start and then periodically on the injected clock. The simulator runs with a manual
// clock, whose advances also age its time stamps, so "old" needs no waiting.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "engine/clone_snapshot_sweep.h"
#include "engine/disk_naming.h"
#include "engine_fixture.h"

namespace engine_test {
namespace {

using namespace std::chrono_literals;
using oxide::StatusCode;
using oxide::StatusOr;
using oxide::backend::Snapshot;
using oxide::backend::SnapshotCreate;

class CloneSweepTest : public EngineTest {
 public:
  std::vector<std::string> sim_args() const override { return {"--manual-clock"}; }

  void SetUp() override {
    EngineTest::SetUp();
    auto source = CreateBlankDisk("sweep-source");
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    source_id_ = source->id;
  }

  StatusOr<Snapshot> Take(const std::string& name, const std::string& description) {
    return Await<Snapshot>([&](oxide::backend::Done<Snapshot> done) {
      client().CreateSnapshot(
          SnapshotCreate{.name = name, .description = description, .disk = source_id_},
          std::move(done));
    });
  }
  // A clone's temporary snapshot as VolumeEngine takes it for the volume `co_name`.
  std::string TakeCloneSnapshot(const std::string& co_name) {
    const std::string name = CloneSnapshotNameFor(co_name);
    auto taken = Take(name, CloneSourceDescriptionFor(co_name));
    EXPECT_TRUE(taken.ok()) << taken.status().ToString();
    return name;
  }
  bool Exists(const std::string& name) {
    auto found = Await<Snapshot>(
        [&](oxide::backend::Done<Snapshot> done) { client().GetSnapshot(name, std::move(done)); });
    EXPECT_TRUE(found.ok() || found.status().code() == StatusCode::kNotFound)
        << found.status().ToString();
    return found.ok();
  }
  // Moves the simulator's time (and so its time stamps) forward by `by`, and this test's wall
  // clock to the same instant.
  void AgeSimulator(std::chrono::milliseconds by) {
    sim_advanced_ += by;
    ASSERT_EQ(control().post("/__sim/clock/advance", {{"ms", by.count()}}).status, 200);
    SyncWall();
  }
  void SyncWall() {
    const int64_t real = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
    clock().SetWall(real + sim_advanced_.count());
  }
  CloneSnapshotSweep::Result SweepOnce(CloneSnapshotSweep& sweep) {
    std::optional<CloneSnapshotSweep::Result> result;
    sweep.SweepNow([&](const CloneSnapshotSweep::Result& r) { result = r; });
    EXPECT_TRUE(RunWithoutTime([&] { return result.has_value(); }));
    return result.value_or(CloneSnapshotSweep::Result{});
  }

  std::string source_id_;
  std::chrono::milliseconds sim_advanced_{0};
};

TEST_F(CloneSweepTest, DeletesOnlyStaleTemporaryCloneSnapshotsNoEntryNames) {
  const std::string stale = TakeCloneSnapshot("pvc-stale");
  const std::string pending = TakeCloneSnapshot("pvc-pending");
  // A clone of this replica still unfinished (a journal entry naming its temporary snapshot).
  CrashedWith(
      "create", DiskNameFor("pvc-pending"),
      nlohmann::json{
          {"co_name", "pvc-pending"}, {"clone_source", source_id_}, {"temp_snapshot", pending}}
          .dump(),
      std::nullopt);
  // Not the plugin's temporary snapshots: never touched, whatever their age.
  ASSERT_TRUE(Take("csi-clone-0123456789abcdef-mine", "someone's own snapshot").ok());
  ASSERT_TRUE(Take("nightly-backup", "").ok());
  ASSERT_TRUE(Take(SnapshotNameFor("snap-a"), SnapshotDescriptionFor("snap-a")).ok());
  AgeSimulator(11min);
  const std::string young = TakeCloneSnapshot("pvc-young");

  CloneSnapshotSweep sweep(&clock(), &client(), &store_->journal(),
                           {.max_age = 10min, .period = 1min});
  CloneSnapshotSweep::Result result = SweepOnce(sweep);
  EXPECT_TRUE(result.listed);
  EXPECT_EQ(result.seen, 3u) << "the three temporary clone snapshots, not the others";
  EXPECT_EQ(result.deleted, 1u);
  EXPECT_EQ(result.kept, 2u);
  EXPECT_FALSE(Exists(stale)) << "older than the maximum age and no entry names it";
  EXPECT_TRUE(Exists(pending)) << "an unfinished journal entry names it";
  EXPECT_TRUE(Exists(young)) << "younger than the maximum age: another replica may use it";
  EXPECT_TRUE(Exists("csi-clone-0123456789abcdef-mine"));
  EXPECT_TRUE(Exists("nightly-backup"));
  EXPECT_TRUE(Exists(SnapshotNameFor("snap-a")));
  EXPECT_EQ(sweep.deleted_total(), 1u);

  // Once the clone's entry is closed and the young one has aged, both go.
  for (const oxide::store::OperationRow& entry : store_->journal().UnfinishedOperations())
    store_->journal().FinishOperation(entry.id, "failed", "test");
  AgeSimulator(11min);
  result = SweepOnce(sweep);
  EXPECT_EQ(result.deleted, 2u);
  EXPECT_FALSE(Exists(pending));
  EXPECT_FALSE(Exists(young));
  EXPECT_TRUE(Exists("csi-clone-0123456789abcdef-mine"));
}

TEST_F(CloneSweepTest, SweepsAtStartThenEveryPeriodOnTheInjectedClock) {
  const std::string left_before_start = TakeCloneSnapshot("pvc-left-before");
  AgeSimulator(30min);
  CloneSnapshotSweep sweep(&clock(), &client(), &store_->journal(),
                           {.max_age = 10min, .period = 1min});
  sweep.Start();
  ASSERT_TRUE(RunWithoutTime([&] { return sweep.sweeps() == 1; }));
  EXPECT_FALSE(Exists(left_before_start)) << "the start-up sweep deleted it";

  const std::string left_later = TakeCloneSnapshot("pvc-left-later");
  Elapse(5min);  // five periodic sweeps: it is still young
  EXPECT_GE(sweep.sweeps(), 5u);
  EXPECT_TRUE(Exists(left_later)) << "5 min old";
  const uint64_t before = sweep.sweeps();
  Elapse(6min);
  EXPECT_GT(sweep.sweeps(), before);
  EXPECT_FALSE(Exists(left_later)) << "11 min old: a periodic sweep deleted it";
  EXPECT_EQ(sweep.deleted_total(), 2u);
}

TEST(CloneSweepTimes, Rfc3339AsOxideWritesIt) {
  EXPECT_EQ(ParseRfc3339Millis("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339Millis("2026-08-20T17:02:11.482913Z"), 1787245331482);
  EXPECT_EQ(ParseRfc3339Millis("2026-08-20T19:02:11.4+02:00"), 1787245331400);
  EXPECT_EQ(ParseRfc3339Millis("2000-02-29T00:00:00.000Z"), 951782400000);
  EXPECT_FALSE(ParseRfc3339Millis(""));
  EXPECT_FALSE(ParseRfc3339Millis("2026-08-20 17:02:11Z"));
  EXPECT_FALSE(ParseRfc3339Millis("2026-08-20T17:02:11"));
  EXPECT_FALSE(ParseRfc3339Millis("2026-13-20T17:02:11Z"));
  EXPECT_FALSE(ParseRfc3339Millis("2026-08-20T17:02:11.Z"));
  EXPECT_FALSE(ParseRfc3339Millis("2026-08-20T17:02:11Zjunk"));
  EXPECT_EQ(CloneSweepPeriodFor(std::chrono::minutes(20)), std::chrono::minutes(5));
  EXPECT_EQ(CloneSweepPeriodFor(std::chrono::seconds(1)), std::chrono::seconds(1));
  EXPECT_EQ(CloneSweepPeriodFor(std::chrono::seconds(10)), std::chrono::seconds(5));
}

}  // namespace
}  // namespace engine_test
