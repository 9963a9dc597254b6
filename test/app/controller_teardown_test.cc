// The controller assembly's teardown order (app/controller_assembly.h): a CreateVolume whose last
// commit (the volume row and the journal entry's end) is still in flight when the assembly is
// destroyed. Destroying a store flushes the store thread, which runs every commit waiter still
// queued; the stores must therefore go after the engines and the Controller service, or the
// volume engine's waiter answers the call through the Controller service already freed (ASan:
// heap-use-after-free). Real parts: the real ControllerAssembly against the real oxide-sim, a real
// SQLite file and its store thread; the one double is the SQLite VFS that holds a commit at its
// fsync (support/faulty_vfs.h): the state database keeps an exclusive lock on its file
// (locking_mode=EXCLUSIVE), so no second connection can hold a commit back.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "app/controller_assembly.h"
#include "engine/disk_naming.h"
#include "engine/journal_entry.h"
#include "engine/volume_state.h"
#include "loop/clock.h"
#include "sim_process.h"
#include "support/faulty_vfs.h"
#include "support/state_db_fixture.h"

namespace oxide {
namespace {

using testing::FaultyVfs;

constexpr int64_t kGiB = int64_t{1} << 30;

// Counts the answers of one call: a call is answered exactly once.
class CreateVolumeSink final : public rpc::ReplySink<csi::v1::CreateVolumeResponse> {
 public:
  void Answer(csi::v1::CreateVolumeResponse, const Status& status) override {
    ++answers;
    last = status;
  }
  int answers = 0;
  std::optional<Status> last;
};

class ControllerTeardownTest : public testing::StateDbFixture {
 protected:
  void SetUp() override {
    FaultyVfs::Install();
    sim_ = std::make_unique<sim_test::SimProcess>();
    ASSERT_TRUE(sim_->running());
    ASSERT_NO_FATAL_FAILURE(OpenStateDb(FaultyVfs::kName));
    backend::ClientConfig oxide;
    oxide.project = "demo";
    oxide.transport.base_url = sim_->base_url();
    oxide.transport.token = sim_test::SimProcess::kToken;
    auto built = ControllerAssembly::Create(settings_, oxide,
                                            {&loop_, &clock_, db_.get(), commit_.get()}, handlers_);
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    assembly_ = std::move(*built);
  }
  void TearDown() override {
    FaultyVfs::ReleaseSyncs();
    assembly_.reset();
    StateDbFixture::TearDown();
    sim_.reset();
  }

  static csi::v1::CreateVolumeRequest CreateRequest(const std::string& name) {
    csi::v1::CreateVolumeRequest request;
    request.set_name(name);
    request.mutable_capacity_range()->set_required_bytes(kGiB);
    auto* capability = request.add_volume_capabilities();
    capability->mutable_mount()->set_fs_type("ext4");
    capability->mutable_access_mode()->set_mode(
        csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    return request;
  }

  Settings settings_;
  LoopClock clock_{loop_.uv()};
  std::unique_ptr<sim_test::SimProcess> sim_;
  rpc::CsiHandlers handlers_;
  std::unique_ptr<ControllerAssembly> assembly_;
};

TEST_F(ControllerTeardownTest, ACommitInFlightAtTeardownRunsNoWaiterOfAGonePart) {
  const std::string name = "pvc-teardown";
  CreateVolumeSink sink;
  handlers_.CreateVolume({}, CreateRequest(name), rpc::Reply(&sink));
  // Registered after the engine's own waiter on the `creating` row: once it runs, the engine has
  // asked Oxide for the disk, and every commit from then on is held at its fsync.
  std::optional<Status> creating_durable;
  commit_->WhenDurable([&](Status committed) {
    if (committed.ok()) FaultyVfs::HoldSyncs();
    creating_durable = committed;
  });
  RunUntil([&] { return creating_durable.has_value(); });
  ASSERT_TRUE(creating_durable->ok()) << creating_durable->ToString();

  // Oxide makes the disk; the engine records the volume as created and the journal entry as done,
  // and waits for that commit to answer the call. A turn's end hands it to the store thread.
  while (commit_->batches_in_flight() == 0)
    Turns(1);
  FaultyVfs::WaitForHeldSyncs(1);  // it is being committed
  ASSERT_EQ(sink.answers, 0) << "answered before the volume's row was durable";
  std::optional<Status> durable;
  commit_->WhenDurable([&](Status committed) { durable = committed; });

  // The shutdown's grace is over: the assembly goes while that commit still runs. The loop does
  // not turn again, so its outcome (and every waiter) is taken by the stores' flush in the
  // assembly's destructor.
  FaultyVfs::ReleaseSyncs();
  assembly_.reset();

  ASSERT_TRUE(durable.has_value()) << "the commit's waiters did not run during the teardown";
  EXPECT_TRUE(durable->ok()) << durable->ToString();
  // The engine went before its waiter ran: the call is answered once, as a dropped call (the CO
  // retries it and finds the volume made), never with a volume read from a freed service.
  EXPECT_EQ(sink.answers, 1);
  ASSERT_TRUE(sink.last.has_value());
  EXPECT_EQ(sink.last->code(), StatusCode::kInternal) << sink.last->ToString();
  // And what the commit carried is in the file.
  const std::string disk_name = engine::DiskNameFor(name);
  EXPECT_EQ(DurableText("SELECT state FROM volumes WHERE disk_name = ?1", disk_name),
            engine::VolumeStateName(engine::VolumeState::kCreated));
  EXPECT_EQ(DurableText("SELECT state FROM operations WHERE volume = ?1", disk_name),
            engine::kJournalDone);
}

}  // namespace
}  // namespace oxide
