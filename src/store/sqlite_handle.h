// Thin RAII wrappers over sqlite3 and sqlite3_stmt. No thread rules of their own: the owner of the
// connection is the only caller (in the plugin: the start-up thread, then the store thread).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace oxide::store {

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool valid() const { return stmt_ != nullptr; }
  // The text is not copied: it must stay valid until the statement is reset (Run and Reset do
  // that), so a temporary string cannot be bound.
  Statement& Bind(int index, std::string_view text);
  Statement& Bind(int index, std::string&& text) = delete;
  Statement& Bind(int index, int64_t value);
  Statement& BindNull(int index);
  // Steps a statement that returns no rows to its end and resets it: OK or the SQLite error.
  Status Run(sqlite3* db);
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step();
  void Reset();
  std::string ColumnText(int column) const;
  int64_t ColumnInt(int column) const;
  void ReadColumn(int column, std::string& text) const { text = ColumnText(column); }
  void ReadColumn(int column, int64_t& value) const { value = ColumnInt(column); }
  void ReadColumn(int column, uint64_t& value) const {
    value = static_cast<uint64_t>(ColumnInt(column));
  }
  void ReadColumn(int column, bool& flag) const { flag = ColumnInt(column) != 0; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Runs one or more statements that return no rows.
Status Exec(sqlite3* db, const std::string& sql);

// After a query was stepped until it stopped returning rows: OK when its last step was
// SQLITE_DONE (every row read); otherwise UNAVAILABLE naming `what` and SQLite's error.
Status ReadToTheEnd(sqlite3* db, int last_step, const std::string& what);

// Reads a row's columns, from column 0 in order, into `fields`: the order of the query's column
// list is the order of the arguments.
template <typename... Fields>
void ReadColumns(const Statement& row, Fields&... fields) {
  int column = 0;
  (row.ReadColumn(column++, fields), ...);
}

// Runs a query and hands each of its rows to `read_row` (the statement standing on that row);
// then ReadToTheEnd's answer for `what`.
template <typename ReadRow>
Status ForEachRow(sqlite3* db, std::string_view sql, const std::string& what, ReadRow read_row) {
  Statement query(db, sql);
  int step = SQLITE_ROW;
  while ((step = query.Step()) == SQLITE_ROW) {
    read_row(query);
  }
  return ReadToTheEnd(db, step, what);
}

}  // namespace oxide::store
