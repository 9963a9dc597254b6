// SIGTERM with an engine operation still in flight whose call has already been answered (a
// snapshot answered before Oxide's create call returned: operations outlive their RPCs). The real
// plugin against the real simulator: within the grace the plugin waits for the operation, which
// completes in Oxide and closes its journal entry before the process exits; a grace too short
// ends the wait, and the log names what was left. (A replaced pod has no next start to reconcile
// what it abandoned: docs/replicas.md.)
#include <gtest/gtest.h>

#include <csignal>

#include "controller_fixture.h"
#include "support/controller_rig.h"

namespace oxide::testing {
namespace {

using namespace std::chrono_literals;
using grpc::StatusCode;

// Oxide answers a snapshot create `latency` after taking it: the snapshot is visible (ready) at
// once, so CreateSnapshot answers near its deadline while the engine still waits for the POST.
class ShutdownDrainTest : public ControllerTest {
 protected:
  // The state of the journal entries of `kind` in the plugin's database (once the plugin has
  // exited: it holds the database while it runs).
  std::vector<std::string> EntryStates(const std::string& kind) {
    std::string error;
    auto rows = SqliteQuery(setup_->state_db(),
                            "SELECT state FROM operations WHERE kind = '" + kind + "'", &error);
    EXPECT_EQ(error, "");
    std::vector<std::string> states;
    for (const auto& row : rows)
      states.push_back(row[0]);
    return states;
  }
  // CreateSnapshot with a 1 s deadline: answered (by the snapshot Oxide shows) while the engine's
  // create call to Oxide is still in flight.
  void SnapshotOutlivingItsCall(const std::string& volume_id) {
    csi::v1::CreateSnapshotRequest request;
    request.set_name("snap-drain");
    request.set_source_volume_id(volume_id);
    csi::v1::CreateSnapshotResponse response;
    grpc::Status status = controller_->CreateSnapshot(Call(1s).get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    // Oxide has taken it (the request log has it) and holds the answer back: still in flight.
    ASSERT_EQ(CountSimRequests("POST", "snapshot_create"), 1);
  }
  // SIGTERM, then the exit code.
  int TerminateAndWait() {
    plugin_->Signal(SIGTERM);
    return WaitExit();
  }
  // The exit code once the plugin exits; the fixture's TearDown has nothing left to stop.
  int WaitExit() {
    int code = plugin_->WaitExit(30s);
    log_ = plugin_->Log();
    plugin_.reset();
    return code;
  }
  std::vector<nlohmann::json> SimSnapshots() {
    sim_test::Reply reply = api_->get("/v1/snapshots?project=demo");
    EXPECT_EQ(reply.status, 200) << reply.body;
    return reply.json().value("items", std::vector<nlohmann::json>{});
  }

  std::string log_;
};

class SlowSnapshotDrainTest : public ShutdownDrainTest {
 protected:
  std::vector<std::string> sim_args() const override {
    return {"--fault", "snapshot_create:latency_ms=3000"};
  }
  std::vector<std::string> plugin_args() const override { return {"--shutdown-grace=20s"}; }
};

TEST_F(SlowSnapshotDrainTest, SigtermWaitsForTheOperationAndClosesItsJournalEntryBeforeExit) {
  csi::v1::Volume volume = MustCreate("pvc-drain");
  SnapshotOutlivingItsCall(volume.volume_id());
  plugin_->Signal(SIGTERM);
  // The server has stopped taking calls; the operation is still running.
  EXPECT_TRUE(plugin_->WaitForLog("waiting for operations in flight", 10s)) << plugin_->Log();
  EXPECT_NE(plugin_->Log().find("snapshot: CreateSnapshot csi-snap-"), std::string::npos)
      << plugin_->Log();
  ExpectCode(Probe(), StatusCode::UNAVAILABLE);  // the socket is gone: new calls are refused
  EXPECT_EQ(WaitExit(), 0) << log_;
  EXPECT_NE(log_.find("no operation left in flight"), std::string::npos) << log_;
  EXPECT_EQ(log_.find("operations left unfinished"), std::string::npos) << log_;
  EXPECT_EQ(EntryStates("snapshot_create"), std::vector<std::string>{"done"})
      << "the journal entry is closed before the process exits";
  std::vector<nlohmann::json> snapshots = SimSnapshots();
  ASSERT_EQ(snapshots.size(), 1u);
  EXPECT_EQ(snapshots[0]["state"], "ready");
}

class VerySlowSnapshotDrainTest : public ShutdownDrainTest {
 protected:
  std::vector<std::string> sim_args() const override {
    return {"--fault", "snapshot_create:latency_ms=20000"};
  }
  std::vector<std::string> plugin_args() const override { return {"--shutdown-grace=1500ms"}; }
};

TEST_F(VerySlowSnapshotDrainTest, AGraceTooShortEndsTheWaitAndTheLogSaysWhatWasLeft) {
  csi::v1::Volume volume = MustCreate("pvc-short");
  SnapshotOutlivingItsCall(volume.volume_id());
  auto begin = std::chrono::steady_clock::now();
  EXPECT_EQ(TerminateAndWait(), 0) << log_;
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 10s) << "the grace ends the wait";
  std::string left = LogLineWith(log_, "operations left unfinished");
  ASSERT_NE(left, "") << log_;
  EXPECT_NE(left.find("level=warn"), std::string::npos) << left;
  EXPECT_NE(left.find("count=1"), std::string::npos) << left;
  EXPECT_NE(left.find("snapshot: CreateSnapshot csi-snap-"), std::string::npos) << left;
  EXPECT_EQ(EntryStates("snapshot_create"), std::vector<std::string>{"pending"})
      << "left for the next start (or, on another replica, for deterministic names)";
  sim_->kill_hard();  // it would hold its delayed answer for the rest of the 20 s first
}

}  // namespace
}  // namespace oxide::testing
