#include "pagination.h"

#include <algorithm>

#include "base64url.h"
#include "json_reader.h"

namespace oxide_sim {
namespace {

constexpr size_t kMaxTokenLength = 512;
constexpr uint32_t kMaxLimit = 10000;
const std::vector<std::string> kSortModes = {"name_ascending", "name_descending", "id_ascending"};

uint32_t parse_limit(const std::string& text) {
  if (text.empty()) throw bad_query("cannot parse integer from empty string");
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') throw bad_query("invalid digit found in string");
    value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value > 0xffffffffULL) throw bad_query("number too large to fit in target type");
  }
  if (value == 0) throw bad_query("invalid value: integer `0`, expected a nonzero u32");
  return static_cast<uint32_t>(std::min<uint64_t>(value, kMaxLimit));
}

[[noreturn]] void bad_token(const std::string& detail) {
  throw bad_query("failed to parse pagination token: " + detail);
}

void read_token(const std::string& token, PageRequest* request) {
  if (token.size() > kMaxTokenLength) bad_token("serialized token is too large");
  auto decoded = base64url_decode(token);
  if (!decoded) bad_token("Invalid byte or padding in base64 token");
  nlohmann::json parsed;
  try {
    parsed = parse_json_text(*decoded);
  } catch (const BodyError& problem) {
    bad_token(problem.what());
  }
  try {
    ObjectReader outer(parsed, "SerializedToken");
    if (outer.variant("v", {"v1"}) != "v1") bad_token("unsupported token version");
    const nlohmann::json* start = outer.raw("page_start");
    if (start == nullptr) throw BodyError("missing field `page_start`");
    ObjectReader page(*start, "PageSelector");
    request->sort_by = page.variant("sort_by", kSortModes);
    if (page.has("project")) {
      request->project_text = page.string("project");
      std::string problem;
      request->project = parse_name_or_id(*request->project_text, &problem);
      if (!request->project) throw BodyError(problem);
    }
    request->last_seen = page.string("last_seen");
  } catch (const BodyError& problem) {
    bad_token(problem.what());
  }
}

}  // namespace

PageRequest parse_page_request(const ApiCall& call, bool project_required) {
  PageRequest request;
  if (auto limit = query_value(call, "limit")) request.limit = parse_limit(*limit);
  if (auto token = query_value(call, "page_token")) {
    read_token(*token, &request);
    if (project_required && !request.project) bad_token("missing field `project`");
    return request;
  }
  if (auto sort = query_value(call, "sort_by")) {
    bool known = std::find(kSortModes.begin(), kSortModes.end(), *sort) != kSortModes.end();
    if (!known) {
      throw bad_query("unknown variant `" + *sort +
                      "`, expected one of `name_ascending`, `name_descending`, `id_ascending`");
    }
    request.sort_by = *sort;
  }
  request.project = query_name_or_id(call, "project");
  if (request.project) request.project_text = query_value(call, "project");
  if (project_required && !request.project) throw bad_query("missing field `project`");
  return request;
}

std::string encode_page_token(const PageRequest& scan, const std::string& last_seen) {
  nlohmann::ordered_json start;
  start["sort_by"] = scan.sort_by;
  if (scan.project_text) start["project"] = *scan.project_text;
  start["last_seen"] = last_seen;
  nlohmann::ordered_json token;
  token["v"] = "v1";
  token["page_start"] = start;
  return base64url_encode(token.dump());
}

nlohmann::ordered_json build_page(std::vector<PageEntry> entries, const PageRequest& request) {
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
                            : nlohmann::ordered_json(encode_page_token(request, last));
  return page;
}

}  // namespace oxide_sim
