// Runs the plugin with validated settings: state database, event loop, CSI server, signals. Call
// from the main thread, which becomes the loop thread.
#pragma once

#include "backend/client_config.h"
#include "config/settings.h"

namespace oxide {

// Returns the process exit code: 0 after a graceful shutdown, 2 when the plugin cannot start.
// `oxide_config`: the Oxide client's, from backend::ReadClientConfig (which also registers the
// token with the log's redaction; a controller's, unused by a node).
int RunPlugin(const Settings& settings, const backend::ClientConfig& oxide_config);

// Part of RunPlugin's first step: routes SQLite's error log (sqlite3_config(SQLITE_CONFIG_LOG))
// through util/log as debug records with source=sqlite, in the log format the operator chose
// (before, SQLite's reports were lost). Once, before SQLite is first used (sqlite3_config refuses
// after sqlite3_initialize); false when SQLite was already initialized (the log stays as it was).
// The callback runs on whichever thread SQLite reports from (the store's commit thread, the
// loop): it only writes a log record.
bool RouteSqliteLog();

}  // namespace oxide
