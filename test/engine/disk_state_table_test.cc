// Every Oxide disk state (and one this version does not know) driven through the simulator into
// each controller operation, for a volume this replica has a row for and for one it never saw:
// OK only where the operation can act, a retryable code while Oxide moves the disk on, and
// FAILED_PRECONDITION where a person must act (engine/volume_state.h). gtest main thread only.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/disk_naming.h"
#include "engine_fixture.h"

namespace engine_test {
namespace {

using oxide::StatusCode;
using namespace std::chrono_literals;

constexpr StatusCode kOk = StatusCode::kOk;
constexpr StatusCode kRetry = StatusCode::kUnavailable;
constexpr StatusCode kAct = StatusCode::kFailedPrecondition;
// Oxide never moves a state set through the control API on: an operation that waits for the
// disk to settle ends at its time limit.
constexpr StatusCode kWaited = StatusCode::kDeadlineExceeded;

struct StateRow {
  const char* state;
  const char* holder;  // "one", "two" or "" (the attach states name an instance)
  StatusCode create, publish, unpublish, del;
};

// Publish and unpublish name instance "one".
const std::vector<StateRow> kTable = {
    {"detached", "", kOk, kOk, kOk, kOk},
    {"attached", "one", kOk, kOk, kOk, kAct},
    {"attached", "two", kOk, kAct, kOk, kAct},
    {"attaching", "one", kWaited, kWaited, kRetry, kAct},
    {"detaching", "one", kWaited, kRetry, kWaited, kRetry},
    {"creating", "", kWaited, kOk, kOk, kRetry},
    {"maintenance", "", kWaited, kRetry, kOk, kRetry},
    {"import_ready", "", kAct, kAct, kOk, kAct},
    {"importing_from_url", "", kAct, kAct, kOk, kAct},
    {"importing_from_bulk_writes", "", kAct, kAct, kOk, kAct},
    {"finalizing", "", kAct, kAct, kOk, kAct},
    {"destroyed", "", kRetry, kRetry, kOk, kRetry},
    {"faulted", "", kAct, kAct, kOk, kOk},
    {"rebalancing", "", kRetry, kRetry, kRetry, kRetry},  // a state this version does not know
};

enum class Operation { kCreate, kPublish, kUnpublish, kDelete };
const char* Name(Operation op) {
  switch (op) {
    case Operation::kCreate:
      return "CreateVolume";
    case Operation::kPublish:
      return "ControllerPublishVolume";
    case Operation::kUnpublish:
      return "ControllerUnpublishVolume";
    case Operation::kDelete:
      return "DeleteVolume";
  }
  return "";
}

class DiskStateTableTest : public EngineTest {
 protected:
  void SetUp() override {
    engine_options_.operation_limit = 2s;
    EngineTest::SetUp();
  }

  void SetState(const std::string& disk, const StateRow& row) {
    nlohmann::json body = {{"state", row.state}};
    if (*row.holder != '\0') body["instance"] = instances_[row.holder];
    auto reply = control().put("/__sim/disks/" + disk, body);
    ASSERT_EQ(reply.status, 200) << reply.body;
  }

  // A fresh volume in `row`'s state, known to this replica or not; runs `op` on it.
  OperationResult Run(const StateRow& row, Operation op, bool known, int cell) {
    const std::string co_name = "pvc-state-" + std::to_string(cell);
    // Fresh instances per cell: attached disks of earlier cells do not count to their limit.
    instances_["one"] = ControlInstance("one-" + std::to_string(cell), "stopped");
    instances_["two"] = ControlInstance("two-" + std::to_string(cell), "stopped");
    auto created = CreateNow(Spec(co_name));
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    if (!created.ok()) return created;
    if (!known) {
      store_->Remove(created->name);
      commit_->Flush();
    }
    SetState(created->id, row);
    switch (op) {
      case Operation::kCreate:
        return CreateNow(Spec(co_name));
      case Operation::kPublish:
        return PublishNow(created->id, instances_["one"]);
      case Operation::kUnpublish:
        return UnpublishNow(created->id, instances_["one"]);
      case Operation::kDelete:
        return DeleteNow(created->id);
    }
    return oxide::Internal("no such operation");
  }

  std::map<std::string, std::string> instances_;
};

TEST_F(DiskStateTableTest, EachStateGetsTheAnswerItsTableRowSays) {
  int cell = 0;
  for (bool known : {true, false}) {
    for (const StateRow& row : kTable) {
      for (Operation op :
           {Operation::kCreate, Operation::kPublish, Operation::kUnpublish, Operation::kDelete}) {
        StatusCode want = op == Operation::kCreate      ? row.create
                          : op == Operation::kPublish   ? row.publish
                          : op == Operation::kUnpublish ? row.unpublish
                                                        : row.del;
        OperationResult got = Run(row, op, known, ++cell);
        EXPECT_EQ(got.status().code(), want)
            << Name(op) << " of a disk " << row.state
            << (*row.holder ? std::string(" to ") + row.holder : "")
            << (known ? " (row known)" : " (never seen)") << ": " << got.status().ToString();
        ASSERT_TRUE(Settle());
        EXPECT_EQ(PendingEntries(), 0) << "every journal entry is closed";
      }
    }
  }
}

}  // namespace
}  // namespace engine_test
