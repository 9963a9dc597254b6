// Test support for the volume engine: the Oxide client fixture (a real oxide-sim on loopback, a
// loop run by the test thread and the ManualClock every timer runs on) plus a real SQLite state
// database, group commit, volume store and the engine. Helpers craft unfinished journal entries for
// the recovery tests. gtest main thread only (it is the loop thread).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "backend_fixture.h"
#include "engine/volume_engine.h"
#include "store/group_commit.h"
#include "store/state_db.h"
#include "store/volume_store.h"
#include "support/temp_dir.h"

namespace engine_test {

using namespace oxide::engine;  // NOLINT(google-build-using-namespace): test code
using backend_test::kGiB;
using oxide::backend::Disk;

// The journal entry's state as the database file holds it (commits what is pending first).
std::string JournalEntryState(oxide::store::GroupCommit& commit, oxide::store::StateDb& db,
                              int64_t id);

class EngineTest : public backend_test::BackendTest {
 public:
  void SetUp() override;
  void TearDown() override;

  // Destroys and rebuilds engine, store and database handle on the same file (a restart).
  void Restart();
  // Also busy while a commit is running on the store thread.
  bool Busy() override;

  CreateSpec Spec(const std::string& co_name, uint64_t gib = 1);
  OperationResult CreateNow(const CreateSpec& spec, const std::string& fingerprint = "fp");
  OperationResult PublishNow(const std::string& volume_id, const std::string& node);
  OperationResult UnpublishNow(const std::string& volume_id, const std::string& node);
  OperationResult DeleteNow(const std::string& volume_id);
  // Runs the loop until the engine has nothing in flight.
  bool Settle(std::chrono::milliseconds limit = std::chrono::seconds(20));

  // Journals an unfinished entry (and optionally a row) as a crashed plugin would leave them.
  void CrashedWith(const std::string& kind, const std::string& volume, const std::string& args,
                   const std::optional<oxide::store::VolumeRow>& row);
  int64_t PendingEntries();
  std::string EntryState(int64_t id);

  // Attach through the API directly (another actor, or the state before a crash).
  void AttachDirect(const std::string& instance, const std::string& disk);

  // The engine's options at the next Restart(): fast polls on the manual clock.
  EngineOptions engine_options_{.poll_first = std::chrono::milliseconds(20),
                                .poll_max = std::chrono::milliseconds(100),
                                .recovery_retry_max = std::chrono::milliseconds(200)};
  const char* vfs_ = nullptr;  // the SQLite VFS of the next Restart() (nullptr: the default)
  oxide::testing::TempDir dir_;
  std::unique_ptr<oxide::store::StateDb> db_;
  std::unique_ptr<oxide::store::GroupCommit> commit_;
  std::unique_ptr<oxide::store::VolumeStore> store_;
  std::unique_ptr<VolumeEngine> engine_;
};

}  // namespace engine_test
