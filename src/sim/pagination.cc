#include "pagination.h"

#include <algorithm>

#include "api_result.h"
#include "base64url.h"
#include "json_reader.h"

namespace oxide_sim {
namespace {

constexpr size_t kMaxTokenLength = 512;
constexpr uint32_t kMaxLimit = 10000;
const std::vector<std::string> kSortModes = {"name_ascending", "name_descending", "id_ascending"};

ApiResult<uint32_t> ParseLimit(const std::string& text) {
  if (text.empty()) return bad_query("cannot parse integer from empty string");
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return bad_query("invalid digit found in string");
    value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value > 0xffffffffULL) return bad_query("number too large to fit in target type");
  }
  if (value == 0) return bad_query("invalid value: integer `0`, expected a nonzero u32");
  return static_cast<uint32_t>(std::min<uint64_t>(value, kMaxLimit));
}

ApiError BadToken(const std::string& detail) {
  return bad_query("failed to parse pagination token: " + detail);
}

// Reads the token's JSON into *request; failures are serde detail texts.
oxide::Status ReadTokenJson(const nlohmann::json& parsed, PageRequest* request) {
  SIM_ASSIGN_OR_RETURN(ObjectReader outer, ObjectReader::Open(parsed, "SerializedToken"));
  std::string version;
  SIM_ASSIGN_OR_RETURN(version, outer.Variant("v", {"v1"}));
  const nlohmann::json* start = outer.Raw("page_start");
  if (start == nullptr) return BodyError("missing field `page_start`");
  SIM_ASSIGN_OR_RETURN(ObjectReader page, ObjectReader::Open(*start, "PageSelector"));
  SIM_ASSIGN_OR_RETURN(request->sort_by, page.Variant("sort_by", kSortModes));
  if (page.Has("project")) {
    std::string project_text;
    SIM_ASSIGN_OR_RETURN(project_text, page.String("project"));
    request->project_text = project_text;
    NameOrId project;
    SIM_ASSIGN_OR_RETURN(project, ParseNameOrId(project_text));
    request->project = project;
  }
  std::string last_seen;
  SIM_ASSIGN_OR_RETURN(last_seen, page.String("last_seen"));
  request->last_seen = last_seen;
  return oxide::Status::Ok();
}

ApiStatus ReadToken(const std::string& token, PageRequest* request) {
  if (token.size() > kMaxTokenLength) return BadToken("serialized token is too large");
  auto decoded = base64url_decode(token);
  if (!decoded) return BadToken("Invalid byte or padding in base64 token");
  auto parsed = ParseJsonText(*decoded);
  if (!parsed.ok()) return BadToken(parsed.status().message());
  if (oxide::Status read = ReadTokenJson(*parsed, request); !read.ok()) {
    return BadToken(read.message());
  }
  return ApiStatus::Ok();
}

}  // namespace

ApiResult<PageRequest> ParsePageRequest(const ApiCall& call, bool project_required) {
  PageRequest request;
  std::optional<std::string> limit, token, sort;
  SIM_ASSIGN_OR_RETURN(limit, QueryValue(call, "limit"));
  if (limit) {
    SIM_ASSIGN_OR_RETURN(request.limit, ParseLimit(*limit));
  }
  SIM_ASSIGN_OR_RETURN(token, QueryValue(call, "page_token"));
  if (token) {
    SIM_RETURN_IF_ERROR(ReadToken(*token, &request));
    if (project_required && !request.project) return BadToken("missing field `project`");
    return request;
  }
  SIM_ASSIGN_OR_RETURN(sort, QueryValue(call, "sort_by"));
  if (sort) {
    bool known = std::find(kSortModes.begin(), kSortModes.end(), *sort) != kSortModes.end();
    if (!known) {
      return bad_query("unknown variant `" + *sort +
                       "`, expected one of `name_ascending`, `name_descending`, `id_ascending`");
    }
    request.sort_by = *sort;
  }
  SIM_ASSIGN_OR_RETURN(request.project, QueryNameOrId(call, "project"));
  if (request.project) {
    SIM_ASSIGN_OR_RETURN(request.project_text, QueryValue(call, "project"));
  }
  if (project_required && !request.project) return bad_query("missing field `project`");
  return request;
}

std::string EncodePageToken(const PageRequest& scan, const std::string& last_seen) {
  nlohmann::ordered_json start;
  start["sort_by"] = scan.sort_by;
  if (scan.project_text) start["project"] = *scan.project_text;
  start["last_seen"] = last_seen;
  nlohmann::ordered_json token;
  token["v"] = "v1";
  token["page_start"] = start;
  return base64url_encode(token.dump());
}

nlohmann::ordered_json BuildPage(std::vector<PageEntry> entries, const PageRequest& request) {
  const bool by_id = request.sort_by == "id_ascending";
  const bool descending = request.sort_by == "name_descending";
  std::sort(entries.begin(), entries.end(), [&](const PageEntry& a, const PageEntry& b) {
    if (by_id) return a.id < b.id;
    return descending ? a.name > b.name : a.name < b.name;
  });
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  std::string last;
  for (auto& entry : entries) {
    const std::string& key = by_id ? entry.id : entry.name;
    if (request.last_seen) {
      const bool after = descending ? key < *request.last_seen : key > *request.last_seen;
      if (!after) continue;
    }
    if (items.size() >= request.limit) break;
    last = key;
    items.push_back(std::move(entry.json));
  }
  nlohmann::ordered_json page;
  const bool empty = items.empty();
  page["items"] = std::move(items);
  page["next_page"] = empty ? nlohmann::ordered_json(nullptr)
                            : nlohmann::ordered_json(EncodePageToken(request, last));
  return page;
}

}  // namespace oxide_sim
