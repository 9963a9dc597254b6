#include "store/migrations.h"

namespace oxide::store {

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> migrations = {
      {1, "plugin metadata",
       "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;"
       "INSERT INTO meta(key, value) VALUES ('created_by', 'oxide-csi-plugin');"},
  };
  return migrations;
}

}  // namespace oxide::store
