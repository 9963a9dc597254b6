// Building Oxide request targets: percent-encoding of path segments and query values, the query
// string, and the NameOrId rule of the API reference §3 (UUID = by id, without `project`).
// Pure functions: any thread.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oxide::backend {

// Encodes everything but RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~).
std::string PercentEncode(std::string_view value);

class Query {
 public:
  Query& Add(std::string_view key, std::string_view value);
  // Adds nothing when `value` is empty.
  Query& AddIfSet(std::string_view key, std::string_view value);
  // "" or "?k=v&k2=v2", values encoded.
  std::string ToString() const;

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
};

// "/v1/<collection>/<encoded name_or_id>" + "?project=<project>" when it is a name.
std::string ObjectTarget(std::string_view collection, std::string_view name_or_id,
                         std::string_view project, std::string_view suffix = "");

}  // namespace oxide::backend
