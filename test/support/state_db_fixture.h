// Test support: the fixture the in-process node tests share (test/engine's NodeVolumeEngineTest,
// test/node's NodeDurabilityTest): a temporary directory, a real libuv loop run on the test
// thread (which is so its loop thread), and on it a real SQLite state database with its group
// commit. Derived fixtures open the database in their SetUp(), build what uses it, and destroy
// that before this TearDown() runs. Test thread only.
#pragma once

#include <gtest/gtest.h>
#include <uv.h>

#include <memory>
#include <string>

#include "loop/event_loop.h"
#include "store/group_commit.h"
#include "store/state_db.h"
#include "support/temp_dir.h"

namespace oxide::testing {

class StateDbFixture : public ::testing::Test {
 protected:
  // Opens <dir>/state.db (through the SQLite VFS `vfs` when given) and starts its group commit
  // on the loop. Call from SetUp(); check HasFatalFailure() afterwards.
  void OpenStateDb(const char* vfs = nullptr);
  // Destroys the group commit (committing what is pending) and the database, then runs the loop
  // until its handles are closed.
  void TearDown() override;

  // Runs loop turns, each waiting for an event (a worker's result, a commit, a posted wake),
  // until `done` holds.
  template <typename Predicate>
  void RunUntil(Predicate done) {
    while (!done())
      uv_run(loop_.uv(), UV_RUN_ONCE);
  }
  // Runs `count` loop turns, none of them waiting.
  void Turns(int count);
  // Once everything written so far is durable: the first column of the row `sql` finds in the
  // database file with `key` bound to ?1, as text; "none" when it finds no row.
  std::string DurableText(const std::string& sql, const std::string& key);

  TempDir dir_;
  EventLoop loop_;
  std::unique_ptr<store::StateDb> db_;
  std::unique_ptr<store::GroupCommit> commit_;
};

}  // namespace oxide::testing
