// One lock per volume: a CreateVolume retry and a DeleteVolume of the same volume never run at
// once, whichever comes first and at whichever step of the first one the second arrives, so a
// deleted disk never reappears. Oxide answers are slowed (after Oxide has acted) to hold each
// step open. gtest main thread only (it is the loop thread).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "engine/disk_naming.h"
#include "engine_fixture.h"
#include "support/faulty_vfs.h"

namespace engine_test {
namespace {

using oxide::StatusCode;
using namespace std::chrono_literals;

enum class First { kCreate, kDelete };
// When the second call arrives: right after the first was admitted, once the first's journal
// entry is durable, once Oxide has acted on the first (its answer still on the way), or after
// the first was answered.
enum class Step { kAdmitted, kJournaled, kOxideActed, kAnswered };

class VolumeLockTest : public EngineTest {};

TEST_F(VolumeLockTest, ACreateRetryAndADeleteOfOneVolumeNeverBringTheDiskBack) {
  // Oxide acts at once and answers 150 ms later: the window in which the other call arrives.
  SetFaults({{{"operation", "disk_view"}, {"latency_ms", 150}},
             {{"operation", "disk_delete"}, {"latency_ms", 150}}});
  int cell = 0;
  for (First first : {First::kCreate, First::kDelete}) {
    for (Step step : {Step::kAdmitted, Step::kJournaled, Step::kOxideActed, Step::kAnswered}) {
      SCOPED_TRACE("first " + std::string(first == First::kCreate ? "create" : "delete") +
                   ", second at step " + std::to_string(static_cast<int>(step)));
      const std::string co_name = "pvc-lock-" + std::to_string(++cell);
      auto made = CreateNow(Spec(co_name));
      ASSERT_TRUE(made.ok()) << made.status().ToString();
      const std::string id = made->id;

      std::optional<OperationResult> created, deleted;
      auto start_create = [&] {
        engine_->Create(Spec(co_name), "fp", [&](const OperationResult& r) { created = r; });
      };
      auto start_delete = [&] {
        engine_->Delete(id, [&](const OperationResult& r) { deleted = r; });
      };
      const bool create_first = first == First::kCreate;
      const int acted_before =
          create_first ? CountRequests("GET", "disk_view") : CountRequests("DELETE", "disk_delete");
      const uint64_t commits_before = commit_->stats().commits;
      create_first ? start_create() : start_delete();
      auto& first_answer = create_first ? created : deleted;
      switch (step) {
        case Step::kAdmitted:
          break;
        case Step::kJournaled:
          ASSERT_TRUE(RunUntil([&] { return commit_->stats().commits > commits_before; }));
          break;
        case Step::kOxideActed:
          ASSERT_TRUE(RunUntil([&] {
            return (create_first ? CountRequests("GET", "disk_view")
                                 : CountRequests("DELETE", "disk_delete")) > acted_before;
          }));
          break;
        case Step::kAnswered:
          ASSERT_TRUE(RunUntil([&] { return first_answer.has_value(); }));
          break;
      }
      const bool delete_answered_before_create = deleted.has_value() && deleted->ok();
      create_first ? start_delete() : start_create();
      ASSERT_TRUE(RunUntil([&] { return created.has_value() && deleted.has_value(); }));
      ASSERT_TRUE(Settle());
      // As a CO does: a delete refused while the volume was busy is sent again.
      for (int retry = 0; retry < 3 && deleted->status().code() == StatusCode::kAborted; ++retry) {
        deleted = DeleteNow(id);
      }
      ASSERT_TRUE(deleted->ok()) << deleted->status().ToString();
      EXPECT_NE(created->status().code(), StatusCode::kAlreadyExists)
          << created->status().ToString();

      auto disk = GetDisk(DiskNameFor(co_name));
      auto row = store_->FindByDiskName(DiskNameFor(co_name));
      if (delete_answered_before_create) {
        // The create came after the delete had been answered: a new volume, as asked.
        ASSERT_TRUE(created->ok()) << created->status().ToString();
        ASSERT_TRUE(disk.ok()) << disk.status().ToString();
        EXPECT_NE(disk->id, id);
        ASSERT_TRUE(row.has_value());
        EXPECT_EQ(row->volume_id, disk->id);
      } else {
        EXPECT_EQ(disk.status().code(), StatusCode::kNotFound)
            << "the deleted disk came back as " << (disk.ok() ? disk->id : "");
        EXPECT_FALSE(row.has_value()) << "the deleted volume's row came back";
      }
      EXPECT_EQ(PendingEntries(), 0);
    }
  }
}

// A delete whose outcome could not be recorded (the disk was full) is reconciled a moment later;
// a late CreateVolume retry in between must not take the missing disk for a lost one.
TEST_F(VolumeLockTest, ACreateRetryBeforeADeletesOutcomeIsRecordedDoesNotMakeTheDiskAgain) {
  oxide::testing::FaultyVfs::Install();
  vfs_ = oxide::testing::FaultyVfs::kName;
  Restart();
  CreateSpec spec = Spec("pvc-unrecorded-delete");
  auto made = CreateNow(spec);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  SetFaults({{{"operation", "disk_delete"}, {"latency_ms", 300}}});
  std::optional<OperationResult> deleted;
  const uint64_t commits = commit_->stats().commits;
  engine_->Delete(made->id, [&](const OperationResult& r) { deleted = r; });
  ASSERT_TRUE(RunUntil([&] { return commit_->stats().commits > commits; }));  // intent durable
  oxide::testing::FaultyVfs::FailWrites(true);  // then the disk is full
  ASSERT_TRUE(RunUntil([&] { return deleted.has_value(); }));
  oxide::testing::FaultyVfs::FailWrites(false);
  EXPECT_EQ(deleted->status().code(), StatusCode::kUnavailable) << deleted->status().ToString();
  EXPECT_EQ(GetDisk(made->name).status().code(), StatusCode::kNotFound) << "Oxide deleted it";

  auto retried = CreateNow(spec);
  EXPECT_EQ(retried.status().code(), StatusCode::kAborted) << retried.status().ToString();
  ASSERT_TRUE(
      RunUntil([&] { return PendingEntries() == 0 && engine_->tracker().in_flight() == 0; }));
  EXPECT_EQ(GetDisk(made->name).status().code(), StatusCode::kNotFound) << "made again";
  EXPECT_FALSE(store_->FindByDiskName(made->name).has_value());
  EXPECT_EQ(CountRequests("POST", "disk_create"), 1);
}

}  // namespace
}  // namespace engine_test
