#include "store/migrations.h"

namespace oxide::store {

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> migrations = {
      {1, "plugin metadata",
       "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;"
       "INSERT INTO meta(key, value) VALUES ('created_by', 'oxide-csi-plugin');"},
      // Version 2 belongs to the controller's tables.
      {3, "node volume states",
       "CREATE TABLE node_stagings (volume_id TEXT PRIMARY KEY, staging_path TEXT NOT NULL,"
       " state TEXT NOT NULL, capability TEXT NOT NULL, block INTEGER NOT NULL,"
       " fs_type TEXT NOT NULL, serial TEXT NOT NULL, device_name TEXT NOT NULL,"
       " device_number TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT;"
       "CREATE TABLE node_publications (target_path TEXT PRIMARY KEY, volume_id TEXT NOT NULL,"
       " state TEXT NOT NULL, staging_path TEXT NOT NULL, capability TEXT NOT NULL,"
       " readonly INTEGER NOT NULL, updated_at INTEGER NOT NULL) STRICT;"
       "CREATE INDEX node_publications_by_volume ON node_publications(volume_id);"},
  };
  return migrations;
}

}  // namespace oxide::store
