// Dropshot pagination for the list endpoints (README §4): limit (default 100, clamped at
// 10000, 0 rejected), sort_by, and opaque page tokens = URL-safe padded base64 of
// {"v":"v1","page_start":{"sort_by":…,"project":…,"last_seen":…}}. Failures are returned
// (ApiResult), nothing throws. Event-loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api_context.h"

namespace oxide_sim {

struct PageRequest {
  uint32_t limit = 100;
  std::string sort_by = "name_ascending";
  std::optional<std::string> project_text;  // as given (query or token)
  std::optional<NameOrId> project;
  std::optional<std::string> last_seen;
};

// Reads limit/page_token/sort_by/project. Fails with bad_query and dropshot's texts.
// `project_required`: a first page without `project` fails with "missing field `project`".
ApiResult<PageRequest> ParsePageRequest(const ApiCall& call, bool project_required);

std::string EncodePageToken(const PageRequest& scan, const std::string& last_seen);

struct PageEntry {
  std::string name;
  std::string id;
  nlohmann::ordered_json json;
};

// Sorts, skips past last_seen, takes `limit`, and builds {"items":…,"next_page":…}.
nlohmann::ordered_json BuildPage(std::vector<PageEntry> entries, const PageRequest& request);

}  // namespace oxide_sim
