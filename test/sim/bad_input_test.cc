// Bad input never crashes the simulator: malformed JSON, wrong types, missing and unknown
// fields, bodies over 1 MiB, invalid UUIDs, name rules, path tricks.
#include "sim_fixture.h"

namespace sim_test {
namespace {

class BadInputTest : public SimTest {
 protected:
  void TearDown() override {
    EXPECT_EQ(api().get("/v1/ping").status, 200) << "the simulator must still be alive";
    SimTest::TearDown();
  }
  Reply raw_post(const std::string& path, const std::string& body) {
    return api().request("POST", path, body);
  }
};

TEST_F(BadInputTest, MalformedJson) {
  expect_error(raw_post("/v1/disks?project=demo", "{\"name\":"), 400, nullptr,
               "unable to parse JSON body: EOF while parsing a value at line 1 column 8");
  expect_error(raw_post("/v1/disks?project=demo", ""), 400, nullptr,
               "unable to parse JSON body: EOF while parsing a value at line 1 column 0");
  Reply garbage = raw_post("/v1/disks?project=demo", "{]");
  EXPECT_EQ(garbage.status, 400);
  EXPECT_EQ(garbage.json()["message"].get<std::string>().rfind("unable to parse JSON body: ", 0),
            0U);
  EXPECT_FALSE(garbage.json().contains("error_code"));
  expect_error(raw_post("/v1/disks?project=demo", "[1,2]"), 400, nullptr,
               "unable to parse JSON body: invalid type: sequence, expected struct DiskCreate");
  // A number beyond a double (found by fuzz target sim_requests): a 400 like serde's, not a 500.
  expect_error(raw_post("/v1/disks?project=demo", "{\"name\":\"d\",\"size\":1e999}"), 400, nullptr,
               "unable to parse JSON body: number out of range at line 1 column 24");
  Reply wrong_type =
      api().request("POST", "/v1/disks?project=demo", "{}", {"Content-Type: text/plain"});
  EXPECT_EQ(wrong_type.status, 415);
}

TEST_F(BadInputTest, WrongTypesAndMissingFields) {
  nlohmann::json body = blank_disk("pv-a");
  body["size"] = "big";
  expect_error(api().post("/v1/disks?project=demo", body), 400, nullptr,
               "unable to parse JSON body: invalid type: string \"big\", expected u64");
  body["size"] = -5;
  expect_error(api().post("/v1/disks?project=demo", body), 400, nullptr,
               "unable to parse JSON body: invalid value: integer `-5`, expected u64");
  body["size"] = 1.5;
  expect_error(api().post("/v1/disks?project=demo", body), 400, nullptr,
               "unable to parse JSON body: invalid type: floating point `1.5`, expected u64");
  body = blank_disk("pv-a");
  body["description"] = std::string(513, 'd');  // Oxide stores at most 512 bytes
  expect_error(api().post("/v1/disks?project=demo", body), 400, nullptr,
               "unable to parse JSON body: description: 513 bytes; a description is at most 512 "
               "bytes");
  body["description"] = std::string(512, 'd');
  ASSERT_EQ(api().post("/v1/disks?project=demo", body).status, 201);
  ASSERT_EQ(api().del("/v1/disks/pv-a?project=demo").status, 204);
  body = blank_disk("pv-a");
  body.erase("description");
  expect_error(api().post("/v1/disks?project=demo", body), 400, nullptr,
               "unable to parse JSON body: missing field `description`");
  body = blank_disk("pv-a");
  body["disk_backend"]["disk_source"]["type"] = "magic";
  expect_error(api().post("/v1/disks?project=demo", body), 400, nullptr,
               "unable to parse JSON body: unknown variant `magic`, expected one of `blank`, "
               "`snapshot`, `image`, `importing_blocks`");
  body = blank_disk("pv-a");
  body["disk_backend"].erase("disk_source");
  expect_error(api().post("/v1/disks?project=demo", body), 400, nullptr,
               "unable to parse JSON body: missing field `disk_source`");
  expect_error(api().post("/v1/instances/vm/disks/attach?project=demo", {{"disk", 5}}), 400,
               nullptr, "unable to parse JSON body: invalid type: integer `5`, expected a string");
}

TEST_F(BadInputTest, UnknownFieldsAreIgnoredLikeTheRealApi) {
  nlohmann::json body = blank_disk("pv-a");
  body["colour"] = "blue";
  EXPECT_EQ(api().post("/v1/disks?project=demo", body).status, 201);
}

TEST_F(BadInputTest, InvalidUuids) {
  nlohmann::json body = {
      {"name", "pv-s"},
      {"description", ""},
      {"size", kGiB},
      {"disk_backend",
       {{"type", "distributed"},
        {"disk_source", {{"type", "snapshot"}, {"snapshot_id", "not-a-uuid"}}}}}};
  Reply reply = api().post("/v1/disks?project=demo", body);
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(reply.json()["message"].get<std::string>().rfind(
                "unable to parse JSON body: UUID parsing failed: ", 0),
            0U)
      << reply.body;
  // In a path, a bad UUID is read as a name and fails the name rules.
  expect_error(api().get("/v1/disks/8d1e3a6c-zzzz"), 400, nullptr,
               "bad parameter in URL path: name must begin with an ASCII lowercase character");
}

TEST_F(BadInputTest, EveryNameRuleMessage) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string(64, 'a'), "name may contain at most 63 characters"},
      {"", "name requires at least one character"},
      {"1abc", "name must begin with an ASCII lowercase character"},
      {"Abc", "name must begin with an ASCII lowercase character"},
      {"abC",
       "name contains invalid character: \"C\" (allowed characters are lowercase ASCII, digits, "
       "and \"-\")"},
      {"ab_c",
       "name contains invalid character: \"_\" (allowed characters are lowercase ASCII, digits, "
       "and \"-\")"},
      {"abc-", "name cannot end with \"-\""},
      {"abcdef01-2345-4678-9abc-def012345678", "name cannot be a UUID to avoid ambiguity with IDs"},
  };
  for (const auto& [name, message] : cases) {
    expect_error(api().post("/v1/disks?project=demo", blank_disk(name)), 400, nullptr,
                 "unable to parse JSON body: " + message);
  }
  EXPECT_EQ(api().post("/v1/disks?project=demo", blank_disk(std::string(63, 'a'))).status, 201);
  expect_error(api().get("/v1/disks?project=Bad"), 400, nullptr,
               "unable to parse query string: name must begin with an ASCII lowercase character");
}

TEST_F(BadInputTest, BodyOverOneMebibyte) {
  std::string huge = "{\"name\":\"pv-a\",\"description\":\"" + std::string(1100000, 'x') + "\"}";
  expect_error(raw_post("/v1/disks?project=demo", huge), 400, nullptr,
               "request body exceeded maximum size of 1048576 bytes");
  EXPECT_EQ(api().post("/v1/disks?project=demo", blank_disk("after-huge")).status, 201);
}

TEST_F(BadInputTest, PathTricks) {
  for (const char* path : {"/v1/disks/../projects/demo", "/v1/disks/%2e%2e/x", "/v1/disks/a%2Fb",
                           "/v1/disks/a%2fb", "/v1/./ping", "/v1/disks/%zz", "/v1/disks/a%00b"}) {
    Reply reply = api().get(path);
    EXPECT_EQ(reply.status, 400) << path << " " << reply.body;
    EXPECT_EQ(reply.json()["message"].get<std::string>().rfind("bad parameter in URL path: ", 0),
              0U)
        << path << " " << reply.body;
    EXPECT_FALSE(reply.json().contains("error_code"));
  }
  // A percent-encoded ordinary name works.
  create_disk("pv-a");
  EXPECT_EQ(api().get("/v1/disks/pv%2Da?project=demo").status, 200);
}

// Deterministic random mutations of valid bodies on every endpoint that takes one: the
// answer is always a well-formed 2xx/4xx (never 5xx, never a dropped connection).
TEST_F(BadInputTest, RandomBodiesNeverCrashOrFail500) {
  create_disk("pv-a");
  control_instance("vm", "stopped");
  const std::vector<std::pair<std::string, nlohmann::json>> targets = {
      {"/v1/disks?project=demo", blank_disk("pv-r")},
      {"/v1/snapshots?project=demo", {{"name", "s"}, {"description", ""}, {"disk", "pv-a"}}},
      {"/v1/instances?project=demo",
       {{"name", "i"}, {"description", ""}, {"hostname", "i"}, {"ncpus", 1}, {"memory", kGiB}}},
      {"/v1/instances/vm/disks/attach?project=demo", {{"disk", "pv-a"}}},
      {"/v1/instances/vm/disks/detach?project=demo", {{"disk", "pv-a"}}},
  };
  const std::vector<nlohmann::json> values = {nullptr,
                                              true,
                                              -1,
                                              0,
                                              1.5,
                                              "",
                                              "x",
                                              std::string(70, 'a'),
                                              nlohmann::json::array(),
                                              nlohmann::json::object(),
                                              18446744073709551615ULL};
  uint64_t state = 12345;
  auto next = [&]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int round = 0; round < 300; ++round) {
    const auto& [path, valid] = targets[next() % targets.size()];
    nlohmann::json body = valid;
    const int mutations = 1 + static_cast<int>(next() % 3);
    for (int m = 0; m < mutations; ++m) {
      auto it = body.begin();
      std::advance(it, static_cast<long>(next() % body.size()));
      const std::string key = it.key();
      switch (next() % 3) {
        case 0:
          body.erase(key);
          break;
        case 1:
          body[key] = values[next() % values.size()];
          break;
        default:
          body["extra" + std::to_string(m)] = values[next() % values.size()];
          break;
      }
      if (body.empty()) body["x"] = 1;
    }
    std::string text = body.dump();
    if (next() % 5 == 0) text.resize(next() % (text.size() + 1));  // truncated JSON
    const std::string method =
        path.find("/instances?") != std::string::npos && next() % 4 == 0 ? "PUT" : "POST";
    Reply reply = api().request(method, path, text);
    ASSERT_EQ(reply.curl_code, CURLE_OK) << text;
    EXPECT_LT(reply.status, 500) << method << " " << path << " " << text << " -> " << reply.body;
    EXPECT_TRUE(reply.json().is_object() || reply.body.empty()) << reply.body;
  }
}

}  // namespace
}  // namespace sim_test

namespace sim_test {
namespace {

class StrictFieldsTest : public SimTest {
 protected:
  std::vector<std::string> sim_args() const override { return {"--reject-unknown-fields"}; }
};

TEST_F(StrictFieldsTest, UnknownFieldsAreRejectedWhenAskedFor) {
  nlohmann::json body = blank_disk("pv-a");
  body["colour"] = "blue";
  expect_error(api().post("/v1/disks?project=demo", body), 400, nullptr,
               "unable to parse JSON body: unknown field `colour`, expected one of "
               "`description`, `disk_backend`, `name`, `size`");
  body = blank_disk("pv-a");
  body["disk_backend"]["disk_source"]["readonly"] = true;
  Reply nested = api().post("/v1/disks?project=demo", body);
  EXPECT_EQ(nested.status, 400);
  EXPECT_NE(nested.body.find("unknown field `readonly`"), std::string::npos) << nested.body;
  EXPECT_EQ(api().post("/v1/disks?project=demo", blank_disk("pv-a")).status, 201);
}

TEST_F(StrictFieldsTest, ALocalDiskTakesNoDiskSource) {
  nlohmann::json body = blank_disk("pv-local");
  body["disk_backend"]["type"] = "local";
  Reply refused = api().post("/v1/disks?project=demo", body);
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body.find("unknown field `disk_source`"), std::string::npos) << refused.body;
  body["disk_backend"].erase("disk_source");
  EXPECT_EQ(api().post("/v1/disks?project=demo", body).status, 201);
}

}  // namespace
}  // namespace sim_test
