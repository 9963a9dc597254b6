// The journal pruner on a real SQLite file, driven through the group commit with a ManualClock:
// which finished entries go (older than the age bound, or beyond the newest N; oldest first),
// that unfinished ones never go, that each step deletes at most one batch, that a burst of
// finished entries brings a step forward, that the file shrinks and the WAL is truncated
// afterwards, and that a restart after pruning finds the right journal.
#include "store/journal_pruner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <uv.h>

#include <optional>
#include <string>

#include "store_fixture.h"

namespace oxide::store {
namespace {

using std::chrono::milliseconds;
using testing::TempDir;

constexpr int64_t kBatch = 10;
constexpr int64_t kKeep = 100;

class JournalPrunerTest : public StoreFileTest {
 protected:
  void SetUp() override {
    StoreFileTest::SetUp();
    MakeStore();
  }
  void MakeStore() {
    MakeVolumeStore();
    JournalRetention retention;
    retention.max_finished = kKeep;
    retention.batch = kBatch;
    pruner_ = std::make_unique<JournalPruner>(&clock_, commit_.get(), retention);
    store_->journal().SetFinishListener([this] { pruner_->NoteFinished(); });
  }
  void ReleaseStores() override { pruner_.reset(); }

  int64_t Finished() { return Count("SELECT count(*) FROM operations WHERE state != 'pending'"); }

  // `n` operations begun and finished now; returns the first id. `args`: their journal text.
  int64_t FinishMany(int n, const std::string& args = "{}") {
    int64_t first = 0;
    for (int i = 0; i < n; ++i) {
      int64_t id = store_->journal().BeginOperation("create", "disk-" + std::to_string(i), args);
      if (first == 0) first = id;
      store_->journal().FinishOperation(id, "done", "OK");
    }
    Durable();
    return first;
  }

  // A batch to prune and the pruner started, with a real SQLite trigger refusing its DELETE.
  void StartWithAStepThatFails() {
    FinishMany(static_cast<int>(kKeep + kBatch));
    pruner_->Start();
    ASSERT_EQ(sqlite3_exec(db_->handle(),
                           "CREATE TRIGGER refuse_prune BEFORE DELETE ON operations BEGIN "
                           "SELECT RAISE(ABORT, 'injected: the prune step fails'); END;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }

  // Runs the pruner's next timer and commits its step; returns how many entries it deleted.
  int64_t StepOnce() {
    const uint64_t before = pruner_->pruned();
    EXPECT_TRUE(clock_.AdvanceToNextTimer());
    Durable();
    return static_cast<int64_t>(pruner_->pruned() - before);
  }
  // Steps until one finds less than a full batch (then the pruner waits for its period); each
  // step must delete at most one batch. Returns the steps taken.
  int RunUntilIdle() {
    int steps = 0;
    for (;;) {
      const int64_t deleted = StepOnce();
      ++steps;
      EXPECT_LE(deleted, kBatch);
      if (deleted < kBatch) return steps;
      EXPECT_EQ(clock_.NextDue(), clock_.Now()) << "a full batch: the next step is due at once";
    }
  }

  std::unique_ptr<JournalPruner> pruner_;
};

// A prune step that fails (here a real SQLite trigger refuses the DELETE) fails only itself: a
// caller's write made in the same loop turn is committed, and its WhenDurable says OK.
TEST_F(JournalPrunerTest, AFailingStepFailsNoCallersWriteOfTheSameTurn) {
  StartWithAStepThatFails();
  ASSERT_TRUE(clock_.AdvanceToNextTimer());  // the step writes its DELETE in this turn...
  const int64_t id =
      store_->journal().BeginOperation("create", "disk-same-turn", "{}");  // ...and a caller
  std::optional<Status> callers;
  commit_->WhenDurable([&](Status committed) { callers = committed; });
  Durable();
  ASSERT_TRUE(callers.has_value());
  EXPECT_TRUE(callers->ok()) << callers->ToString();
  EXPECT_EQ(Count("SELECT count(*) FROM operations WHERE id = " + std::to_string(id)), 1);
  EXPECT_EQ(pruner_->steps(), 0U) << "the failed step is not counted";
  EXPECT_EQ(pruner_->pruned(), 0U);
  EXPECT_TRUE(db_->last_commit().ok()) << "a failed step is no failed commit";
}

TEST_F(JournalPrunerTest, AFailingStepFailsNoWaiterWithoutWritesOfTheSameTurn) {
  StartWithAStepThatFails();
  std::optional<Status> before_step;
  std::optional<Status> after_step;
  commit_->WhenDurable([&](Status committed) { before_step = committed; });
  ASSERT_TRUE(clock_.AdvanceToNextTimer());  // the step writes its DELETE in this turn
  commit_->WhenDurable([&](Status committed) { after_step = committed; });
  Durable();
  ASSERT_TRUE(before_step.has_value());
  ASSERT_TRUE(after_step.has_value());
  EXPECT_TRUE(before_step->ok()) << before_step->ToString();
  EXPECT_TRUE(after_step->ok()) << after_step->ToString();
  EXPECT_EQ(pruner_->steps(), 0U) << "the step itself failed";
}

TEST_F(JournalPrunerTest, KeepsTheNewestFinishedAndUnfinishedEntriesInBoundedSteps) {
  // Three entries that never finish, among 150 finished ones.
  int64_t pending[3];
  for (int64_t& id : pending)
    id = store_->journal().BeginOperation("delete", "vol-pending", "{}");
  const int64_t first = FinishMany(150);
  ASSERT_EQ(Finished(), 150);

  pruner_->Start();
  EXPECT_EQ(RunUntilIdle(), 6) << "5 full batches of 10, then one that found nothing";
  EXPECT_EQ(pruner_->pruned(), 50u);
  EXPECT_EQ(Finished(), kKeep);
  // Oldest first: the first 50 went, the newest 100 stay.
  EXPECT_EQ(Count("SELECT min(id) FROM operations WHERE state != 'pending'"), first + 50);
  EXPECT_EQ(Count("SELECT count(*) FROM operations WHERE state = 'pending'"), 3);
  EXPECT_EQ(store_->journal().UnfinishedOperations().size(), 3u);
  // Idle now: the next step waits for the period.
  ASSERT_TRUE(clock_.NextDue().has_value());
  EXPECT_EQ(*clock_.NextDue() - clock_.Now(), pruner_->retention().period);

  // A day later every finished entry is past the age bound; the pending ones still stay.
  clock_.Advance(std::chrono::hours(24));
  Durable();  // the period steps that fell due meanwhile (nothing was a day old yet then)
  clock_.Advance(milliseconds(1));
  RunUntilIdle();
  EXPECT_EQ(Finished(), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM operations WHERE state = 'pending'"), 3);
  for (int64_t id : pending)
    EXPECT_TRUE(store_->journal().FindUnfinishedOperation(id).has_value());
}

TEST_F(JournalPrunerTest, ABurstOfFinishedEntriesBringsTheNextStepForward) {
  pruner_->Start();
  RunUntilIdle();
  const Clock::TimePoint period_step = *clock_.NextDue();
  ASSERT_GT(period_step, clock_.Now());
  // Fewer than a batch finished: the pruner keeps waiting for its period.
  FinishMany(kBatch - 1);
  EXPECT_EQ(*clock_.NextDue(), period_step);
  // A batch's worth finished: a step is due at once (it does not count the rows; the step finds
  // out whether any are over the bounds).
  FinishMany(kKeep);
  EXPECT_EQ(*clock_.NextDue(), clock_.Now());
  EXPECT_EQ(StepOnce(), kBatch - 1) << "109 finished, 100 kept";
  EXPECT_GT(*clock_.NextDue(), clock_.Now()) << "less than a batch: back to the period";
  FinishMany(kBatch);
  EXPECT_EQ(*clock_.NextDue(), clock_.Now());
  EXPECT_EQ(StepOnce(), kBatch);
  EXPECT_EQ(Finished(), kKeep);
}

int64_t FileSize(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size) : -1;
}

TEST_F(JournalPrunerTest, TheFileShrinksAndTheWalIsTruncatedAfterPruning) {
  const std::string path = dir_.File("state.db");
  const std::string bulky(2000, 'x');  // about 2,000 entries of 2 KB: a few MB of pages
  FinishMany(2000, "{\"pad\":\"" + bulky + "\"}");
  const int64_t pages_before = Count("PRAGMA page_count");
  ASSERT_GT(pages_before, 1000);

  pruner_->Start();
  RunUntilIdle();
  EXPECT_EQ(Finished(), kKeep);
  // The steps that followed full batches were a burst: no compaction among them (the next
  // entries would take the pages again). The quiet steps of the following periods give the
  // free pages back, at most one bounded round each, and truncate the WAL.
  const int64_t per_round = pruner_->retention().compaction.pages_per_call;
  for (int round = 0; round < 10; ++round) {
    const int64_t free_before = Count("PRAGMA freelist_count");
    if (free_before <= pruner_->retention().compaction.keep_free_pages) break;
    const uint64_t compactions = pruner_->compactions();
    EXPECT_EQ(StepOnce(), 0);
    EXPECT_EQ(pruner_->compactions(), compactions + 1) << "a quiet step compacts";
    EXPECT_LE(free_before - Count("PRAGMA freelist_count"), per_round);
  }
  EXPECT_LE(Count("PRAGMA freelist_count"), pruner_->retention().compaction.keep_free_pages);
  EXPECT_LT(Count("PRAGMA page_count"), pages_before / 5);
  EXPECT_EQ(FileSize(path), Count("PRAGMA page_count") * Count("PRAGMA page_size"));
  EXPECT_EQ(FileSize(path + "-wal"), 0);
}

TEST_F(JournalPrunerTest, ARestartAfterPruningFindsTheUnfinishedEntriesAndNewIds) {
  const int64_t open_entry =
      store_->journal().BeginOperation("publish", "vol-open", "{\"node\":\"n1\"}");
  FinishMany(kKeep + 3 * kBatch);
  pruner_->Start();
  RunUntilIdle();
  const int64_t newest = Count("SELECT max(id) FROM operations");

  pruner_.reset();
  store_.reset();
  MakeStore();
  ASSERT_TRUE(store_->load_status().ok());
  ASSERT_EQ(store_->journal().UnfinishedOperations().size(), 1u);
  EXPECT_EQ(store_->journal().UnfinishedOperations()[0].id, open_entry);
  EXPECT_EQ(store_->journal().UnfinishedOperations()[0].args, "{\"node\":\"n1\"}");
  EXPECT_GT(store_->journal().BeginOperation("create", "vol-new", "{}"), newest);
  Durable();
  EXPECT_EQ(Finished(), kKeep);
}

}  // namespace
}  // namespace oxide::store
