// Routes SQLite's error log (sqlite3_config(SQLITE_CONFIG_LOG)) through util/log as debug records
// with source=sqlite, in the log format the operator chose (before, SQLite's reports were lost).
// Install once at start on the main thread, before SQLite is first used (sqlite3_config refuses
// after sqlite3_initialize). The callback runs on whichever thread SQLite reports from (the store's
// commit thread, the loop): it only writes a log record.
#pragma once

namespace oxide {

// False when SQLite was already initialized (the log stays as it was).
bool RouteSqliteLog();

}  // namespace oxide
