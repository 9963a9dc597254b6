// Percent-decoding of URL paths and query strings, with the path-trick checks
// (dot segments, encoded slashes, bad escapes). Failures are values (nullopt, PathSplit::error),
// nothing throws. Pure functions; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oxide_sim {

// Decodes %XX escapes (and '+' as space when `plus_is_space`). nullopt on a bad escape.
std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space);

struct PathSplit {
  std::vector<std::string> segments;  // decoded
  std::string error;                  // non-empty: reject with 400 "bad parameter in URL path: ..."
};

// Splits "/v1/disks/x" into decoded segments. Rejects "." and ".." segments (raw or
// encoded), encoded '/' or NUL inside a segment, and malformed escapes.
PathSplit SplitPath(std::string_view raw_path);

using QueryPairs = std::vector<std::pair<std::string, std::string>>;

// Parses "a=1&b=x%20y". nullopt on a malformed escape.
std::optional<QueryPairs> ParseQuery(std::string_view raw_query);

}  // namespace oxide_sim
