// Unit tests of the pure parts: JSON parsing of typed objects (unknown fields ignored, missing or
// mistyped required fields → INTERNAL naming the field and the request id), request targets,
// and the retry policy.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <tuple>

#include "backend/oxide_json.h"
#include "backend/request_paths.h"
#include "backend/retry_policy.h"

namespace oxide::backend {
namespace {

using Json = nlohmann::json;

Json DiskJson() {
  return Json::parse(R"({"id":"8d1e3a6c-1f57-4c59-9d55-0b7b2f6e4a21","name":"pv-a",
    "description":"csi volume","project_id":"dc7be448-efc4-4141-8e9b-60ad829eb570",
    "snapshot_id":null,"image_id":null,"size":10737418240,"block_size":4096,
    "state":{"state":"attached","instance":"0b6c0000-0000-4000-8000-000000000000"},
    "device_path":"/mnt/pv-a","disk_type":"distributed","read_only":false,
    "time_created":"2026-08-20T17:02:11.482913Z","time_modified":"2026-08-20T17:02:11.482913Z"})");
}

HttpResponse With(const Json& body) {
  HttpResponse response;
  response.status = 200;
  response.body = body.dump();
  response.request_id = "req-1";
  return response;
}

TEST(Parsing, DiskWithUnknownFieldsIgnored) {
  Json json = DiskJson();
  json["brand_new_field"] = {{"x", 1}};
  json["state"]["extra"] = true;
  auto disk = ParseDisk("get disk", With(json));
  ASSERT_TRUE(disk.ok()) << disk.status().ToString();
  EXPECT_EQ(disk->size, 10737418240U);
  EXPECT_EQ(disk->state.status, oxide::backend::DiskStatus::kAttached);
  EXPECT_EQ(disk->state.instance, "0b6c0000-0000-4000-8000-000000000000");
  EXPECT_FALSE(disk->snapshot_id.has_value());
}

TEST(Parsing, EveryOxideDiskStateIsParsedOnceAndAnUnknownOneIsNeitherAttachedNorDetached) {
  const std::vector<std::pair<std::string, DiskStatus>> states = {
      {"creating", DiskStatus::kCreating},
      {"detached", DiskStatus::kDetached},
      {"import_ready", DiskStatus::kImportReady},
      {"importing_from_url", DiskStatus::kImportingFromUrl},
      {"importing_from_bulk_writes", DiskStatus::kImportingFromBulkWrites},
      {"finalizing", DiskStatus::kFinalizing},
      {"maintenance", DiskStatus::kMaintenance},
      {"attaching", DiskStatus::kAttaching},
      {"attached", DiskStatus::kAttached},
      {"detaching", DiskStatus::kDetaching},
      {"destroyed", DiskStatus::kDestroyed},
      {"faulted", DiskStatus::kFaulted},
      {"resizing", DiskStatus::kUnknown},  // not in this plugin's API version
  };
  for (const auto& [text, status] : states) {
    SCOPED_TRACE(text);
    Json json = DiskJson();
    json["state"]["state"] = text;
    auto disk = ParseDisk("get disk", With(json));
    ASSERT_TRUE(disk.ok()) << disk.status().ToString();
    EXPECT_EQ(disk->state.status, status);
    EXPECT_EQ(disk->state.instance.empty(), !HoldsInstance(status));
    if (status != DiskStatus::kUnknown) {
      EXPECT_EQ(DiskStatusName(status), text);
    }
  }
  EXPECT_EQ(DiskStatusName(DiskStatus::kUnknown), std::string("unknown"));
  for (const char* text : {"creating", "ready", "faulted", "destroyed"}) {
    EXPECT_EQ(SnapshotStatusName(ParseSnapshotStatus(text)), std::string(text));
  }
  EXPECT_EQ(ParseSnapshotStatus("Ready"), SnapshotStatus::kUnknown);
}

TEST(Parsing, MissingOrMistypedRequiredFieldIsInternal) {
  struct Case {
    std::function<void(Json&)> change;
    std::string field_message;
  };
  const std::vector<Case> cases = {
      {[](Json& j) { j.erase("size"); }, "field \"size\" is missing"},
      {[](Json& j) { j["size"] = "ten"; }, "field \"size\" is not an unsigned integer"},
      {[](Json& j) { j["size"] = -1; }, "field \"size\" is not an unsigned integer"},
      {[](Json& j) { j["state"].erase("state"); }, "field \"state.state\" is missing"},
      {[](Json& j) { j["state"].erase("instance"); }, "field \"state.instance\" is missing"},
      {[](Json& j) { j["state"] = "detached"; }, "field \"state\" is not an object"},
      {[](Json& j) { j["snapshot_id"] = 5; }, "field \"snapshot_id\" is not a string or null"},
      {[](Json& j) { j["read_only"] = "no"; }, "field \"read_only\" is not a boolean"},
  };
  for (const Case& c : cases) {
    Json json = DiskJson();
    c.change(json);
    const Status status = ParseDisk("get disk \"pv-a\"", With(json)).status();
    EXPECT_EQ(status.code(), StatusCode::kInternal) << c.field_message;
    EXPECT_NE(status.message().find(c.field_message), std::string::npos) << status.ToString();
    EXPECT_NE(status.message().find("get disk \"pv-a\""), std::string::npos);
    EXPECT_NE(status.message().find("(oxide request id req-1)"), std::string::npos);
  }
  HttpResponse not_json = With(Json());
  not_json.body = "{oops";
  EXPECT_EQ(ParseDisk("x", not_json).status().code(), StatusCode::kInternal);
}

TEST(Parsing, PagesNameTheItem) {
  Json bad = DiskJson();
  bad.erase("name");
  auto page = ParseDiskPage("list", With({{"items", {DiskJson(), bad}}, {"next_page", "t"}}));
  EXPECT_EQ(page.status().code(), StatusCode::kInternal);
  EXPECT_NE(page.status().message().find("field \"items[1].name\" is missing"), std::string::npos)
      << page.status().ToString();
  auto good = ParseDiskPage("list", With({{"items", {DiskJson()}}, {"next_page", nullptr}}));
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->items.size(), 1U);
  EXPECT_FALSE(good->next_page.has_value());
  EXPECT_EQ(ParseDiskPage("list", With({{"next_page", nullptr}})).status().code(),
            StatusCode::kInternal);
}

// A single disk is read in one streaming pass, a page of disks through the generic document
// reader. Both must agree on every body: the same disk, or the same problem.
void ExpectSameAsPageReader(const std::string& body) {
  HttpResponse single;
  single.status = 200;
  single.body = body;
  HttpResponse page = single;
  page.body = R"({"next_page":null,"items":[)" + body + "]}";
  StatusOr<Disk> streamed = ParseDisk("get disk", single);
  StatusOr<Page<Disk>> generic = ParseDiskPage("get disk", page);
  ASSERT_EQ(streamed.ok(), generic.ok()) << body << "\n streamed: " << streamed.status().ToString()
                                         << "\n generic: " << generic.status().ToString();
  if (!streamed.ok()) {
    std::string expected = generic.status().message();
    const std::string prefix = "items[0].";
    for (size_t at = expected.find(prefix); at != std::string::npos; at = expected.find(prefix))
      expected.erase(at, prefix.size());
    EXPECT_EQ(streamed.status().message(), expected) << body;
    return;
  }
  ASSERT_EQ(generic->items.size(), 1U);
  const Disk& a = *streamed;
  const Disk& b = generic->items[0];
  EXPECT_EQ(std::tie(a.id, a.name, a.description, a.project_id, a.snapshot_id, a.image_id, a.size,
                     a.block_size, a.state.status, a.state.instance, a.disk_type, a.read_only,
                     a.time_created, a.time_modified),
            std::tie(b.id, b.name, b.description, b.project_id, b.snapshot_id, b.image_id, b.size,
                     b.block_size, b.state.status, b.state.instance, b.disk_type, b.read_only,
                     b.time_created, b.time_modified))
      << body;
}

TEST(Parsing, StreamedDiskReaderAgreesWithTheDocumentReaderOnEveryChange) {
  const std::vector<Json> values = {nullptr,
                                    5,
                                    -1,
                                    1.5,
                                    "text",
                                    "",
                                    true,
                                    Json::object(),
                                    Json::array({1, {{"state", "x"}}}),
                                    18446744073709551615ULL};
  const Json base = DiskJson();
  std::vector<std::string> bodies = {base.dump()};
  for (const auto& [field, unused] : base.items()) {
    Json erased = base;
    erased.erase(field);
    bodies.push_back(erased.dump());
    for (const Json& value : values) {
      Json changed = base;
      changed[field] = value;
      bodies.push_back(changed.dump());
    }
  }
  for (const char* state :
       {"creating", "detached", "attaching", "attached", "detaching", "faulted", "maintenance"}) {
    for (const char* member : {"state", "instance"}) {
      Json without = base;
      without["state"]["state"] = state;
      without["state"].erase(member);
      bodies.push_back(without.dump());
      for (const Json& value : values) {
        Json changed = base;
        changed["state"]["state"] = state;
        changed["state"][member] = value;
        bodies.push_back(changed.dump());
      }
    }
  }
  // What a document cannot hold twice or in another order: raw bodies.
  const std::string disk = base.dump();
  const std::string inner = disk.substr(1, disk.size() - 2);
  bodies.push_back("{" + inner + R"(,"size":"twice","state":{"state":"detached"}})");
  bodies.push_back(R"({"state":{"state":"attached"},"state":{"state":"detached"},)" + inner + "}");
  bodies.push_back("{" + inner + R"(,"nested":{"size":"x","state":{"state":5},"id":[]}})");
  bodies.push_back(R"({"zzz":[{"a":{"b":[]}}],)" + inner + "}");
  bodies.push_back("{}");
  bodies.push_back(R"({"state":{}})");
  for (const std::string& body : bodies) {
    SCOPED_TRACE(body);
    ExpectSameAsPageReader(body);
  }
  EXPECT_GT(bodies.size(), 250U);
}

TEST(Parsing, StreamedDiskReaderRejectsWhatIsNotOneJsonObject) {
  for (const char* body : {"", "{oops", "{} x", "[", "{\"id\":}", "nul"}) {
    HttpResponse response;
    response.body = body;
    EXPECT_NE(ParseDisk("get disk", response).status().message().find("the body is not JSON"),
              std::string::npos)
        << body;
  }
  for (const char* body : {"null", "5", "\"disk\"", "[]", "[{}]"}) {
    HttpResponse response;
    response.body = body;
    EXPECT_NE(
        ParseDisk("get disk", response).status().message().find("the body is not a JSON object"),
        std::string::npos)
        << body;
  }
}

TEST(Parsing, UtilizationNested) {
  Json json = {{"capacity", {{"cpus", 1}, {"memory", 2}, {"storage", 3}}},
               {"provisioned", {{"cpus", 0}, {"memory", 0}}}};
  const Status status = ParseUtilization("u", With(json)).status();
  EXPECT_NE(status.message().find("field \"provisioned.storage\" is missing"), std::string::npos)
      << status.ToString();
}

TEST(RequestPaths, EncodingUuidsAndSelectors) {
  EXPECT_EQ(PercentEncode("pv-a_b.c~"), "pv-a_b.c~");
  EXPECT_EQ(PercentEncode("a b/c?d&e=f%"), "a%20b%2Fc%3Fd%26e%3Df%25");
  EXPECT_EQ(ObjectTarget("disks", "pv-a", "my proj"), "/v1/disks/pv-a?project=my%20proj");
  EXPECT_EQ(ObjectTarget("disks", "8d1e3a6c-1f57-4c59-9d55-0b7b2f6e4a21", "p"),
            "/v1/disks/8d1e3a6c-1f57-4c59-9d55-0b7b2f6e4a21");
  EXPECT_EQ(ObjectTarget("instances", "n1", "p", "/disks/attach"),
            "/v1/instances/n1/disks/attach?project=p");
  EXPECT_EQ(Query().Add("a", "1").AddIfSet("b", "").Add("c", "x y").ToString(), "?a=1&c=x%20y");
}

TEST(RetryPolicy, BackoffIsJitteredExponentialCappedAndSeeded) {
  RetryOptions options;
  options.max_attempts = 10;
  options.seed = 42;
  RetryPolicy first(options), second(options);
  HttpRequest get;
  HttpResponse unavailable;
  unavailable.status = 503;
  for (int attempt = 1; attempt < 10; ++attempt) {
    const auto delay = first.NextDelay(get, unavailable, attempt);
    ASSERT_TRUE(delay.has_value());
    EXPECT_EQ(delay, second.NextDelay(get, unavailable, attempt));  // same seed, same delays
    const int64_t step = std::min<int64_t>(200LL << (attempt - 1), 10000);
    EXPECT_GE(delay->count(), step / 2) << attempt;
    EXPECT_LE(delay->count(), step) << attempt;
  }
  EXPECT_FALSE(first.NextDelay(get, unavailable, 10).has_value());  // attempts used up
}

TEST(RetryPolicy, WhatIsRetried) {
  HttpRequest get, post;
  post.method = HttpMethod::kPost;
  post.idempotent = false;
  HttpResponse response;
  for (int status : {429, 502, 503, 504}) {
    response.status = status;
    EXPECT_TRUE(RetryPolicy::IsRetryable(get, response)) << status;
    EXPECT_FALSE(RetryPolicy::IsRetryable(post, response)) << status;
  }
  for (int status : {200, 400, 404, 409, 500, 507}) {
    response.status = status;
    EXPECT_FALSE(RetryPolicy::IsRetryable(get, response)) << status;
  }
  response.status = 0;
  for (auto error : {TransportError::kTimeout, TransportError::kConnect}) {
    response.transport_error = error;
    EXPECT_TRUE(RetryPolicy::IsRetryable(get, response));
    EXPECT_FALSE(RetryPolicy::IsRetryable(post, response));
  }
  response.transport_error = TransportError::kTls;
  EXPECT_FALSE(RetryPolicy::IsRetryable(get, response));
}

TEST(RetryPolicy, RetryAfterReplacesTheBackoffUpToALimit) {
  RetryOptions options;
  options.seed = 1;
  RetryPolicy policy(options);
  HttpRequest get;
  HttpResponse throttled;
  throttled.status = 429;
  throttled.retry_after = std::chrono::seconds(3);
  EXPECT_EQ(policy.NextDelay(get, throttled, 1), std::chrono::milliseconds(3000));
  throttled.retry_after = std::chrono::seconds(31);
  EXPECT_FALSE(policy.NextDelay(get, throttled, 1).has_value());
}

}  // namespace
}  // namespace oxide::backend
