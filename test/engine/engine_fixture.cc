#include "engine_fixture.h"

#include "engine/disk_naming.h"

namespace engine_test {

std::string JournalEntryState(oxide::store::GroupCommit& commit, oxide::store::StateDb& db,
                              int64_t id) {
  commit.Flush();  // the store thread is idle until the next write
  oxide::store::Statement read(db.handle(), "SELECT state FROM operations WHERE id = ?1");
  read.Bind(1, id);
  return read.Step() == SQLITE_ROW ? read.ColumnText(0) : "missing";
}

void EngineTest::SetUp() {
  BackendTest::SetUp();
  Restart();
}

void EngineTest::TearDown() {
  engine_.reset();
  store_.reset();
  commit_.reset();
  db_.reset();
  BackendTest::TearDown();
}

void EngineTest::Restart() {
  engine_.reset();
  store_.reset();
  commit_.reset();
  db_.reset();
  uv_run(loop(), UV_RUN_NOWAIT);
  auto opened = oxide::store::StateDb::Open(dir_.File("state.db"), vfs_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  db_ = std::move(*opened);
  commit_ = std::make_unique<oxide::store::GroupCommit>(loop(), db_.get());
  store_ = std::make_unique<oxide::store::VolumeStore>(db_.get(), commit_.get(),
                                                       [this] { return clock().WallMillis(); });
  engine_ = std::make_unique<VolumeEngine>(&clock(), &client(), store_.get(), commit_.get(),
                                           engine_options_);
}

bool EngineTest::Busy() {
  return BackendTest::Busy() || (commit_ && commit_->batches_in_flight() > 0);
}

CreateSpec EngineTest::Spec(const std::string& co_name, uint64_t gib) {
  return {.co_name = co_name,
          .disk_name = DiskNameFor(co_name),
          .description = DescriptionFor(co_name, "", ""),
          .size = gib * kGiB,
          .required = gib * kGiB,
          .limit = 0,
          .block_size = 4096,
          .block_size_requested = false,
          .snapshot_id = "",
          .clone_source = ""};
}

namespace {
template <typename Start>
OperationResult Wait(EngineTest& test, Start start) {
  std::optional<OperationResult> result;
  start([&](const OperationResult& r) { result = r; });
  if (!test.RunUntil([&] { return result.has_value(); })) {
    return oxide::Status(oxide::StatusCode::kDeadlineExceeded, "test timed out");
  }
  return *result;
}
}  // namespace

OperationResult EngineTest::CreateNow(const CreateSpec& spec, const std::string& fingerprint) {
  return Wait(*this, [&](OperationWaiter w) { engine_->Create(spec, fingerprint, w); });
}
OperationResult EngineTest::PublishNow(const std::string& volume_id, const std::string& node) {
  return Wait(*this, [&](OperationWaiter w) { engine_->Publish(volume_id, node, "fp", w); });
}
OperationResult EngineTest::UnpublishNow(const std::string& volume_id, const std::string& node) {
  return Wait(*this, [&](OperationWaiter w) { engine_->Unpublish(volume_id, node, w); });
}
OperationResult EngineTest::DeleteNow(const std::string& volume_id) {
  return Wait(*this, [&](OperationWaiter w) { engine_->Delete(volume_id, w); });
}

bool EngineTest::Settle(std::chrono::milliseconds limit) {
  return RunUntil([&] { return engine_->tracker().in_flight() == 0; }, limit);
}

void EngineTest::CrashedWith(const std::string& kind, const std::string& volume,
                             const std::string& args,
                             const std::optional<oxide::store::VolumeRow>& row) {
  store_->journal().BeginOperation(kind, volume, args);
  if (row) store_->Put(*row);
  commit_->Flush();
}

int64_t EngineTest::PendingEntries() {
  return static_cast<int64_t>(store_->journal().UnfinishedOperations().size());
}

std::string EngineTest::EntryState(int64_t id) {
  return JournalEntryState(*commit_, *db_, id);
}

void EngineTest::AttachDirect(const std::string& instance, const std::string& disk) {
  auto attached = Await<Disk>([&](oxide::backend::Done<Disk> done) {
    client().AttachDisk(instance, disk, std::move(done));
  });
  ASSERT_TRUE(attached.ok()) << attached.status().ToString();
}

}  // namespace engine_test
