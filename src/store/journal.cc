#include "store/journal.h"

#include "metrics/plugin_metrics.h"

namespace oxide::store {
namespace {

constexpr const char* kOperationColumns = "id, kind, volume, args, started_ms";

}  // namespace

Journal::Journal(StateDb* db, GroupCommit* commit, std::function<int64_t()> wall_ms)
    : commit_(commit),
      wall_ms_(wall_ms ? std::move(wall_ms) : std::function<int64_t()>(NowMs)),
      listener_(commit, [this](uint64_t batch, bool ok) {
        unfinished_.BatchDone(batch, ok);
        if (!ok) RecountPending();  // the batch's journal entries were undone
      }) {
  sqlite3* h = db->handle();
  begin_op_ =
      Statement(h,
                "INSERT INTO operations(id, kind, volume, args, state, outcome, started_ms) "
                "VALUES (?1, ?2, ?3, ?4, 'pending', '', ?5)");
  finish_op_ = Statement(h,
                         "UPDATE operations SET state = ?2, outcome = ?3, finished_ms = ?4 "
                         "WHERE id = ?1");
  Load(h);
}

void Journal::Load(sqlite3* db) {
  load_status_ = ForEachRow(
      db, std::string("SELECT ") + kOperationColumns + " FROM operations WHERE state = 'pending'",
      "the unfinished operations", [this](const Statement& operation) {
        OperationRow row;
        ReadColumns(operation, row.id, row.kind, row.subject, row.args, row.started_ms);
        const int64_t id = row.id;
        unfinished_.Load(id, std::move(row));
      });
  RecountPending();
  if (!load_status_.ok()) return;
  Statement last(db, "SELECT ifnull(max(id), 0) FROM operations");
  if (last.Step() != SQLITE_ROW) {
    load_status_ = ReadToTheEnd(db, SQLITE_ERROR, "the last operation id");
    return;
  }
  next_operation_id_ = last.ColumnInt(0) + 1;
}

int64_t Journal::BeginOperation(const std::string& kind, const std::string& subject,
                                const std::string& args) {
  affinity_.Check("Journal::BeginOperation");
  OperationRow row{.id = next_operation_id_++,
                   .kind = kind,
                   .subject = subject,
                   .args = args,
                   .started_ms = wall_ms_()};
  uint64_t batch = commit_->Write([this, row](sqlite3* db) {
    return begin_op_.Bind(1, row.id)
        .Bind(2, row.kind)
        .Bind(3, row.subject)
        .Bind(4, row.args)
        .Bind(5, row.started_ms)
        .Run(db);
  });
  const int64_t id = row.id;
  CountPending(row.kind, 1);
  unfinished_.Write(batch, id, std::move(row));
  PublishOldestPending();
  return id;
}

void Journal::FinishOperation(int64_t id, const std::string& state, const std::string& outcome) {
  affinity_.Check("Journal::FinishOperation");
  uint64_t batch = commit_->Write([this, id, state, outcome, now = wall_ms_()](sqlite3* db) {
    return finish_op_.Bind(1, id).Bind(2, state).Bind(3, outcome).Bind(4, now).Run(db);
  });
  if (const OperationRow* row = unfinished_.Find(id)) CountPending(row->kind, -1);
  unfinished_.Write(batch, id, std::nullopt);
  PublishOldestPending();
  if (on_finish_) on_finish_();
}

void Journal::CountPending(const std::string& kind, int64_t delta) {
  int64_t& count = pending_by_kind_[kind];
  count += delta;
  metrics::Families().operations_pending.With({kind}).Set(static_cast<double>(count));
}

void Journal::RecountPending() {
  for (auto& [kind, count] : pending_by_kind_)
    count = 0;
  for (const auto& [id, row] : unfinished_.rows())
    ++pending_by_kind_[row.kind];
  for (const auto& [kind, count] : pending_by_kind_)
    metrics::Families().operations_pending.With({kind}).Set(static_cast<double>(count));
  PublishOldestPending();
}

void Journal::PublishOldestPending() const {
  const auto& rows = unfinished_.rows();
  const double start =
      rows.empty() ? 0 : static_cast<double>(rows.begin()->second.started_ms) / 1e3;
  metrics::Families().oldest_pending_operation_start.With({}).Set(start);
}

std::vector<OperationRow> Journal::UnfinishedOperations() const {
  affinity_.Check("Journal::UnfinishedOperations");
  std::vector<OperationRow> rows;
  for (const auto& [id, row] : unfinished_.rows())
    rows.push_back(row);
  return rows;
}

std::optional<OperationRow> Journal::FindUnfinishedOperation(int64_t id) const {
  affinity_.Check("Journal::FindUnfinishedOperation");
  const OperationRow* row = unfinished_.Find(id);
  return row ? std::optional<OperationRow>(*row) : std::nullopt;
}

}  // namespace oxide::store
