// The stores and their group commit across threads, as the loop-thread checks
// (loop/loop_affinity.h) allow it: made on one thread (start-up), driven from the loop thread,
// destroyed on the first thread once the loop has stopped. In the checked builds (Debug, ASan,
// TSan) a store or group commit used off its loop thread after that aborts, naming the call.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <thread>

#include "loop/event_loop.h"
#include "loop/loop_affinity.h"
#include "store/group_commit.h"
#include "store/node_volume_store.h"
#include "store/snapshot_store.h"
#include "store/state_db.h"
#include "store/volume_store.h"
#include "support/temp_dir.h"

namespace oxide::store {
namespace {

using testing::TempDir;

class StoreThreadsTest : public ::testing::Test {
 protected:
  // On the test thread, before the loop runs: the store thread starts and the stores read their
  // tables and register for batch outcomes.
  void SetUp() override {
    auto opened = StateDb::Open(dir_.File("state.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    db_ = std::move(*opened);
    commit_ = std::make_unique<GroupCommit>(loop_.uv(), db_.get());
    volumes_ = std::make_unique<VolumeStore>(db_.get(), commit_.get());
    snapshots_ = std::make_unique<SnapshotStore>(db_.get(), commit_.get());
    nodes_ = std::make_unique<NodeVolumeStore>(db_.get(), commit_.get());
    ASSERT_TRUE(volumes_->load_status().ok());
  }
  // On the test thread, after the loop thread has ended: the destructors commit what is
  // pending and unregister.
  void TearDown() override {
    nodes_.reset();
    snapshots_.reset();
    volumes_.reset();
    commit_.reset();
    db_.reset();
  }

  // Runs the loop on its own thread: one write to every store, and stops once they are durable.
  // Returns the commit's outcome.
  Status WriteFromTheLoopThread() {
    std::optional<Status> durable;
    std::thread loop_thread([this] { loop_.Run(); });
    loop_.Post([this, &durable] {
      VolumeRow volume;
      volume.disk_name = "disk-1";
      volume.state = "CREATING";
      volumes_->Put(volume);
      volumes_->journal().BeginOperation("create", "disk-1", "{}");
      SnapshotRow snapshot;
      snapshot.snapshot_name = "snap-1";
      snapshot.state = "creating";
      snapshots_->Put(snapshot);
      StagingRow staging;
      staging.volume_id = "vol-1";
      staging.staging_path = "/st/vol-1";
      staging.state = kStaging;
      nodes_->PutStaging(staging);
      commit_->WhenDurable([this, &durable](Status committed) {
        durable = committed;
        loop_.Stop();
      });
    });
    loop_thread.join();  // the loop has stopped: everything it did is visible here
    return durable.value_or(Internal("the loop stopped before the writes were durable"));
  }

  TempDir dir_;
  EventLoop loop_;
  std::unique_ptr<StateDb> db_;
  std::unique_ptr<GroupCommit> commit_;
  std::unique_ptr<VolumeStore> volumes_;
  std::unique_ptr<SnapshotStore> snapshots_;
  std::unique_ptr<NodeVolumeStore> nodes_;
};

TEST_F(StoreThreadsTest, MadeOnOneThreadDrivenFromTheLoopThreadAndDestroyedOnTheFirst) {
  Status durable = WriteFromTheLoopThread();
  EXPECT_TRUE(durable.ok()) << durable.ToString();
  // TearDown destroys them here, off the loop thread, without tripping a check.
}

TEST_F(StoreThreadsTest, UsedOffItsLoopThreadAStoreAborts) {
  if (!LoopAffinity::kEnabled) GTEST_SKIP() << "loop checks are compiled out of this build";
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  ASSERT_TRUE(WriteFromTheLoopThread().ok());
  EXPECT_DEATH(volumes_->FindByDiskName("disk-1"),
               "VolumeStore::FindByDiskName called off its loop thread");
  EXPECT_DEATH(commit_->WhenDurable([](Status) {}),
               "GroupCommit::WhenDurable called off its loop thread");
}

}  // namespace
}  // namespace oxide::store
