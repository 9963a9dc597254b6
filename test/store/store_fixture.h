// A controller state database for store tests: a real SQLite file in a temporary directory, its
// group commit on a libuv loop that the test thread runs, a ManualClock for journal times, and
// the VolumeStore over them. A test reads the file with Count() after Durable().
// gtest main thread only (it is the loop thread of these stores).
#pragma once

#include <gtest/gtest.h>
#include <uv.h>

#include <memory>
#include <string>

#include "store/group_commit.h"
#include "store/sqlite_handle.h"
#include "store/state_db.h"
#include "store/volume_store.h"
#include "support/manual_clock.h"
#include "support/temp_dir.h"

namespace oxide::store {

class StoreFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uv_loop_init(&loop_);
    auto opened = StateDb::Open(dir_.File("state.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    db_ = std::move(*opened);
    commit_ = std::make_unique<GroupCommit>(&loop_, db_.get());
  }
  void TearDown() override {
    ReleaseStores();
    store_.reset();
    commit_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    ASSERT_EQ(uv_loop_close(&loop_), 0);
  }
  // Destroys what a test's fixture added on top of the store, before the store goes.
  virtual void ReleaseStores() {}

  void MakeVolumeStore() {
    store_ = std::make_unique<VolumeStore>(db_.get(), commit_.get(),
                                           [this] { return clock_.WallMillis(); });
  }
  // Commits everything written so far (and the idle work it queued); the file may be read after.
  void Durable() { commit_->Flush(); }

  int64_t Count(const std::string& sql) {
    Statement statement(db_->handle(), sql);
    EXPECT_EQ(statement.Step(), SQLITE_ROW) << sql;
    return statement.ColumnInt(0);
  }

  testing::TempDir dir_;
  uv_loop_t loop_{};
  testing::ManualClock clock_;
  std::unique_ptr<StateDb> db_;
  std::unique_ptr<GroupCommit> commit_;
  std::unique_ptr<VolumeStore> store_;
};

}  // namespace oxide::store
