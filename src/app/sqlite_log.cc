#include "app/sqlite_log.h"

#include <sqlite3.h>

#include <string>

#include "util/log.h"

namespace oxide {
namespace {

// Debug level: every report SQLite logs also comes back to the store as a return code, which the
// store turns into its own record or error with advice (e.g. "corrupt or not an SQLite database;
// it was left untouched — restore it from a backup"), so at the default level a failure keeps
// its one line; --log-level=debug shows SQLite's own detail (the page, the statement) beside it.
void SqliteLog(void* /*unused*/, int code, const char* message) {
  if (!log::Enabled(log::Level::kDebug)) return;
  log::Write(log::Level::kDebug, message != nullptr ? message : "",
             {{"source", "sqlite"}, {"sqlite_code", log::Num(code)}});
}

}  // namespace

bool RouteSqliteLog() {
  return sqlite3_config(SQLITE_CONFIG_LOG, &SqliteLog, nullptr) == SQLITE_OK;
}

}  // namespace oxide
