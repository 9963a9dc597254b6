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

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Runs one or more statements that return no rows.
Status Exec(sqlite3* db, const std::string& sql);

// After a query was stepped until it stopped returning rows: OK when its last step was
// SQLITE_DONE (every row read); otherwise UNAVAILABLE naming `what` and SQLite's error.
Status ReadToTheEnd(sqlite3* db, int last_step, const std::string& what);

}  // namespace oxide::store
