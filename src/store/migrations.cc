#include "store/migrations.h"

namespace oxide::store {

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> migrations = {
      {1, "plugin metadata",
       "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;"
       "INSERT INTO meta(key, value) VALUES ('created_by', 'oxide-csi-plugin');"},
      // The controller's per-volume state machine and its operation journal. A volume row is
      // keyed by its Oxide disk name (derived from the CO's name, so known before Oxide answers);
      // volume_id (the disk's UUID) is NULL until Oxide has created the disk.
      {2, "controller volumes and operation journal",
       "CREATE TABLE volumes ("
       "  disk_name TEXT PRIMARY KEY,"
       "  volume_id TEXT UNIQUE,"
       "  co_name TEXT NOT NULL,"
       "  size INTEGER NOT NULL,"
       "  block_size INTEGER NOT NULL,"
       "  state TEXT NOT NULL,"
       "  node_id TEXT NOT NULL,"
       "  updated_ms INTEGER NOT NULL) STRICT;"
       "CREATE TABLE operations ("
       "  id INTEGER PRIMARY KEY,"
       "  kind TEXT NOT NULL,"
       "  volume TEXT NOT NULL,"
       "  args TEXT NOT NULL,"
       "  state TEXT NOT NULL,"
       "  outcome TEXT NOT NULL,"
       "  started_ms INTEGER NOT NULL,"
       "  finished_ms INTEGER) STRICT;"
       "CREATE INDEX operations_unfinished ON operations(state) WHERE state = 'pending';"},
      {3, "node volume states",
       "CREATE TABLE node_stagings (volume_id TEXT PRIMARY KEY, staging_path TEXT NOT NULL,"
       " state TEXT NOT NULL, capability TEXT NOT NULL, block INTEGER NOT NULL,"
       " fs_type TEXT NOT NULL, serial TEXT NOT NULL, device_name TEXT NOT NULL,"
       " device_number TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT;"
       "CREATE TABLE node_publications (target_path TEXT PRIMARY KEY, volume_id TEXT NOT NULL,"
       " state TEXT NOT NULL, staging_path TEXT NOT NULL, capability TEXT NOT NULL,"
       " readonly INTEGER NOT NULL, updated_at INTEGER NOT NULL) STRICT;"
       "CREATE INDEX node_publications_by_volume ON node_publications(volume_id);"},
      // Snapshots this controller made or tracks, keyed by their Oxide name (derived from the
      // CO's name); snapshot_id is NULL until Oxide has accepted the snapshot. A row in state
      // 'creating' is polled until Oxide reports it ready, faulted or gone.
      {4, "controller snapshots",
       "CREATE TABLE snapshots ("
       "  snapshot_name TEXT PRIMARY KEY,"
       "  snapshot_id TEXT UNIQUE,"
       "  co_name TEXT NOT NULL,"
       "  source_volume_id TEXT NOT NULL,"
       "  size INTEGER NOT NULL,"
       "  state TEXT NOT NULL,"
       "  time_created TEXT NOT NULL,"
       "  polls INTEGER NOT NULL,"
       "  updated_ms INTEGER NOT NULL) STRICT;"
       "CREATE INDEX snapshots_creating ON snapshots(state) WHERE state = 'creating';"},
      // One row the group commit rewrites after a failed commit, until a commit succeeds again:
      // a real write, so Probe and /healthz turn healthy as soon as the disk takes writes again.
      {5, "commit heartbeat",
       "CREATE TABLE heartbeat (id INTEGER PRIMARY KEY CHECK (id = 1),"
       " written_ms INTEGER NOT NULL) STRICT;"},
      // The UUID our mkfs writes, recorded with the format intent before mkfs runs: a resumed
      // intent formats again only a device that is blank or holds our own unfinished work.
      {6, "node format intent uuid",
       "ALTER TABLE node_stagings ADD COLUMN format_uuid TEXT NOT NULL DEFAULT '';"},
      // Whether the volume is encrypted (LUKS2): only an encrypted volume's device is its open
      // mapping, and its disk is never handed on.
      {7, "node staging encrypted",
       "ALTER TABLE node_stagings ADD COLUMN encrypted INTEGER NOT NULL DEFAULT 0;"},
  };
  return migrations;
}

}  // namespace oxide::store
