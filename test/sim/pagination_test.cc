// Pagination over 1,000 disks in every sort order, limits, tokens and next_page (README §4).
#include <algorithm>
#include <set>

#include "sim_fixture.h"

namespace sim_test {
namespace {

class PaginationTest : public SimTest {
 protected:
  static constexpr int kCount = 1000;
  void SetUp() override {
    SimTest::SetUp();
    for (int i = 0; i < kCount; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "pv-%04d", (i * 7919) % kCount);  // shuffled order
      Reply reply = api().post("/v1/disks?project=demo", blank_disk(name));
      ASSERT_EQ(reply.status, 201) << reply.body;
      ids_.push_back(reply.json()["id"]);
      names_.push_back(name);
    }
  }
  // Walks every page; returns (key per item, number of requests).
  std::pair<std::vector<std::string>, int> walk(const std::string& sort_by, int limit,
                                                const std::string& key) {
    std::vector<std::string> seen;
    int requests = 0;
    std::string query =
        "/v1/disks?project=demo&limit=" + std::to_string(limit) + "&sort_by=" + sort_by;
    while (true) {
      Reply reply = api().get(query);
      ++requests;
      EXPECT_EQ(reply.status, 200) << reply.body;
      const nlohmann::json page = reply.json();
      if (page["items"].empty()) {
        EXPECT_TRUE(page["next_page"].is_null());
        break;
      }
      EXPECT_TRUE(page["next_page"].is_string());  // set whenever items is non-empty
      for (const auto& item : page["items"])
        seen.push_back(item[key]);
      // The Go SDK resends project with the token; it must be ignored.
      query =
          "/v1/disks?project=ignored-project&sort_by=id_ascending&limit=" + std::to_string(limit) +
          "&page_token=" + page["next_page"].get<std::string>();
      if (requests > kCount + 5) break;
    }
    return {seen, requests};
  }
  std::vector<std::string> ids_, names_;
};

TEST_F(PaginationTest, EverySortOrderCoversAllItemsOnce) {
  std::vector<std::string> names = names_;
  std::sort(names.begin(), names.end());
  auto [ascending, requests] = walk("name_ascending", 100, "name");
  EXPECT_EQ(ascending, names);
  EXPECT_EQ(requests, 11);  // 10 full pages + the empty one
  std::vector<std::string> reversed(names.rbegin(), names.rend());
  auto [descending, requests_down] = walk("name_descending", 33, "name");
  EXPECT_EQ(descending, reversed);
  EXPECT_EQ(requests_down, 32);  // 31 pages (30x33 + 10) + the empty one
  std::vector<std::string> ids = ids_;
  std::sort(ids.begin(), ids.end());
  auto [by_id, requests_id] = walk("id_ascending", 250, "id");
  EXPECT_EQ(by_id, ids);
  EXPECT_EQ(requests_id, 5);
}

TEST_F(PaginationTest, LimitDefaultClampAndZero) {
  EXPECT_EQ(api().get("/v1/disks?project=demo").json()["items"].size(), 100U);
  EXPECT_EQ(api().get("/v1/disks?project=demo&limit=20000").json()["items"].size(), 1000U);
  expect_error(api().get("/v1/disks?project=demo&limit=0"), 400, nullptr,
               "unable to parse query string: invalid value: integer `0`, expected a nonzero u32");
  expect_error(api().get("/v1/disks?project=demo&limit=ten"), 400, nullptr,
               "unable to parse query string: invalid digit found in string");
  expect_error(api().get("/v1/disks?project=demo&limit=-1"), 400, nullptr,
               "unable to parse query string: invalid digit found in string");
}

TEST_F(PaginationTest, TokenFormatAndBadTokens) {
  const nlohmann::json page = api().get("/v1/disks?project=demo&limit=2").json();
  const std::string token = page["next_page"];
  // URL-safe base64 with padding of the documented JSON.
  EXPECT_EQ(token.size() % 4, 0U);
  EXPECT_EQ(token.find_first_of("+/"), std::string::npos);
  const std::string expected_json =
      std::string(
          R"({"v":"v1","page_start":{"sort_by":"name_ascending","project":"demo","last_seen":")") +
      page["items"][1]["name"].get<std::string>() + "\"}}";
  std::string decoded;
  {
    static const std::string alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    int bits = 0, value = 0;
    for (char c : token) {
      if (c == '=') break;
      value = (value << 6) | static_cast<int>(alphabet.find(c));
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        decoded.push_back(static_cast<char>((value >> bits) & 0xff));
      }
    }
  }
  EXPECT_EQ(decoded, expected_json);
  // A token carries project and sort order: no project needed in the query.
  Reply next = api().get("/v1/disks?limit=2&page_token=" + token);
  EXPECT_EQ(next.status, 200) << next.body;
  Reply bad = api().get("/v1/disks?project=demo&page_token=not-a-token!");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.json()["message"].get<std::string>().rfind(
                "unable to parse query string: failed to parse pagination token: ", 0),
            0U)
      << bad.body;
  Reply long_token = api().get("/v1/disks?project=demo&page_token=" + std::string(600, 'A'));
  EXPECT_EQ(long_token.status, 400);
  Reply wrong_json = api().get("/v1/disks?page_token=eyJ2IjoidjIifQ==");  // {"v":"v2"}
  EXPECT_EQ(wrong_json.status, 400);
}

TEST_F(PaginationTest, ShortPageStillHasNextPage) {
  const nlohmann::json page =
      api().get("/v1/disks?project=demo&limit=999&sort_by=name_descending").json();
  ASSERT_EQ(page["items"].size(), 999U);
  const std::string token = page["next_page"];
  const nlohmann::json last = api().get("/v1/disks?limit=999&page_token=" + token).json();
  EXPECT_EQ(last["items"].size(), 1U);
  EXPECT_TRUE(last["next_page"].is_string());
  const nlohmann::json empty =
      api().get("/v1/disks?limit=999&page_token=" + last["next_page"].get<std::string>()).json();
  EXPECT_TRUE(empty["items"].empty());
  EXPECT_TRUE(empty["next_page"].is_null());
}

TEST_F(PaginationTest, SnapshotAndInstanceListsPaginateToo) {
  for (int i = 0; i < 5; ++i) {
    const std::string name = "s" + std::to_string(i);
    ASSERT_EQ(api()
                  .post("/v1/snapshots?project=demo",
                        {{"name", name}, {"description", ""}, {"disk", "pv-0000"}})
                  .status,
              201);
    control_instance("vm-" + std::to_string(i), "stopped");
  }
  for (const std::string list : {"/v1/snapshots", "/v1/instances"}) {
    std::set<std::string> names;
    std::string query = list + "?project=demo&limit=2";
    for (int guard = 0; guard < 10; ++guard) {
      const nlohmann::json page = api().get(query).json();
      if (page["items"].empty()) break;
      for (const auto& item : page["items"])
        names.insert(item["name"].get<std::string>());
      query = list + "?limit=2&page_token=" + page["next_page"].get<std::string>();
    }
    EXPECT_EQ(names.size(), 5U) << list;
  }
}

}  // namespace
}  // namespace sim_test
