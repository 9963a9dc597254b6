// The schema, as an ordered list of migrations. Migration N brings the schema from version N-1
// to N; PRAGMA user_version records the applied version. Never edit a released migration: add one.
#pragma once

#include <vector>

namespace oxide::store {

struct Migration {
  int version;
  const char* description;
  const char* sql;
};

const std::vector<Migration>& Migrations();

}  // namespace oxide::store
