#include "support/state_db_fixture.h"

#include "store/sqlite_handle.h"

namespace oxide::testing {

void StateDbFixture::OpenStateDb(const char* vfs) {
  auto opened = store::StateDb::Open(dir_.File("state.db"), vfs);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  db_ = std::move(*opened);
  commit_ = std::make_unique<store::GroupCommit>(loop_.uv(), db_.get());
}

void StateDbFixture::TearDown() {
  commit_.reset();
  db_.reset();
  loop_.Stop();
  loop_.Run();
}

void StateDbFixture::Turns(int count) {
  for (int i = 0; i < count; ++i)
    uv_run(loop_.uv(), UV_RUN_NOWAIT);
}

std::string StateDbFixture::DurableText(const std::string& sql, const std::string& key) {
  commit_->Flush();
  store::Statement read(db_->handle(), sql);
  read.Bind(1, key);
  return read.Step() == SQLITE_ROW ? read.ColumnText(0) : "none";
}

}  // namespace oxide::testing
