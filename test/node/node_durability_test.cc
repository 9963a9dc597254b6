// The node service's rows are durable before the side effect they announce and before the answer:
// the real csi_adapter::NodeService on a real SQLite file, with the fault-injecting VFS holding
// every fsync, so the test sees what waits for which commit. NodeUnpublishVolume of a target that
// holds no mount has a side effect a test without root can watch: the target directory is removed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <optional>

#include "csi/node_service.h"
#include "store/node_volume_store.h"
#include "support/faulty_vfs.h"
#include "support/state_db_fixture.h"

namespace oxide::engine {
namespace {

using testing::FaultyVfs;

template <typename Response>
class RecordingSink final : public rpc::ReplySink<Response> {
 public:
  RecordingSink() = default;
  RecordingSink(const RecordingSink&) = delete;
  RecordingSink& operator=(const RecordingSink&) = delete;
  virtual ~RecordingSink() = default;
  void Answer(Response, const Status& status) override { answer = status; }
  std::optional<Status> answer;
};

bool Exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

class NodeDurabilityTest : public testing::StateDbFixture {
 protected:
  void SetUp() override {
    FaultyVfs::Install();
    settings_.instance_id = "11111111-2222-3333-4444-555555555555";
    settings_.sysfs_root = dir_.File("sys");
    ASSERT_NO_FATAL_FAILURE(OpenStateDb(FaultyVfs::kName));
  }
  void TearDown() override {
    FaultyVfs::ReleaseSyncs();
    node_.reset();
    StateDbFixture::TearDown();
  }
  // A publication row of `volume_id` as NodePublishVolume leaves it, at a target directory that
  // holds no mount (nothing to unmount), committed; then the node service starts. Returns the
  // target.
  std::string PublishedVolumeAndNodeService(const std::string& volume_id) {
    const std::string target = dir_.File("pods/" + volume_id + "/volume");
    std::filesystem::create_directories(target);
    {
      store::NodeVolumeStore rows(db_.get(), commit_.get());
      rows.PutPublication({.target_path = target,
                           .volume_id = volume_id,
                           .state = store::kPublished,
                           .staging_path = dir_.File("staging/" + volume_id),
                           .capability = "mount:ext4",
                           .readonly = false});
    }
    node_ = std::make_unique<csi_adapter::NodeService>(settings_, settings_.instance_id, &loop_,
                                                       &clock_, db_.get(), 12, commit_.get());
    return target;
  }
  std::string PublicationState(const std::string& target) {
    return DurableText("SELECT state FROM node_publications WHERE target_path = ?1", target);
  }

  Settings settings_;
  LoopClock clock_{loop_.uv()};
  std::unique_ptr<csi_adapter::NodeService> node_;
};

TEST_F(NodeDurabilityTest, UnpublishRecordsItsIntentBeforeActingAndAnswersOnlyOnceItsRowIsGone) {
  const std::string target = PublishedVolumeAndNodeService("vol-1");
  ASSERT_EQ(PublicationState(target), store::kPublished);

  FaultyVfs::HoldSyncs();
  RecordingSink<csi::v1::NodeUnpublishVolumeResponse> sink;
  csi::v1::NodeUnpublishVolumeRequest request;
  request.set_volume_id("vol-1");
  request.set_target_path(target);
  node_->NodeUnpublishVolume({}, request, rpc::Reply(&sink));
  ASSERT_FALSE(sink.answer.has_value()) << sink.answer->message();

  Turns(1);  // the turn's end hands "unpublishing" to the store thread
  ASSERT_EQ(commit_->batches_in_flight(), 1u);
  FaultyVfs::WaitForHeldSyncs(1);  // it is being committed
  Turns(10);
  EXPECT_TRUE(Exists(target)) << "the unmount must wait until its intent is durable";
  EXPECT_FALSE(sink.answer.has_value());

  FaultyVfs::AllowSyncs(1);
  RunUntil([&] { return !Exists(target); });  // the side effect ran on a worker thread
  // Its completion (already signalled) writes the row's removal; a turn's end hands it over.
  while (commit_->batches_in_flight() == 0)
    Turns(1);
  FaultyVfs::WaitForHeldSyncs(1);  // it is being committed
  Turns(10);
  EXPECT_FALSE(sink.answer.has_value()) << "answered before its row's removal was durable";

  FaultyVfs::ReleaseSyncs();
  RunUntil([&] { return sink.answer.has_value(); });
  EXPECT_TRUE(sink.answer->ok()) << sink.answer->message();
  EXPECT_EQ(PublicationState(target), "none");
}

TEST_F(NodeDurabilityTest, AFailedCommitOfTheIntentAnswersUnavailableAndLeavesTheTargetAlone) {
  const std::string target = PublishedVolumeAndNodeService("vol-2");

  FaultyVfs::FailWrites(true);
  RecordingSink<csi::v1::NodeUnpublishVolumeResponse> sink;
  csi::v1::NodeUnpublishVolumeRequest request;
  request.set_volume_id("vol-2");
  request.set_target_path(target);
  node_->NodeUnpublishVolume({}, request, rpc::Reply(&sink));
  RunUntil([&] { return sink.answer.has_value(); });
  FaultyVfs::FailWrites(false);
  EXPECT_EQ(sink.answer->code(), StatusCode::kUnavailable);
  EXPECT_NE(sink.answer->message().find("state database"), std::string::npos);
  EXPECT_TRUE(Exists(target)) << "nothing is done without its intent on disk";
  EXPECT_EQ(PublicationState(target), store::kPublished);
}

}  // namespace
}  // namespace oxide::engine
