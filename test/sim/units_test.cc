// In-process unit tests of the pure parts: base64url, UUIDs, names, URL splitting,
// the router and the fault sequence.
#include <gtest/gtest.h>

#include "base64url.h"
#include "faults.h"
#include "ids.h"
#include "json_reader.h"
#include "names.h"
#include "router.h"
#include "url.h"

namespace oxide_sim {
namespace {

TEST(Base64Url, RoundTripsWithPadding) {
  for (const std::string text : {"", "a", "ab", "abc", "abcd", "\xff\xfe\xfd?>"}) {
    const std::string encoded = base64url_encode(text);
    EXPECT_EQ(encoded.size() % 4, 0U);
    EXPECT_EQ(base64url_decode(encoded), text);
  }
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8=");
  EXPECT_FALSE(base64url_decode("abc"));
  EXPECT_FALSE(base64url_decode("ab+/"));
  EXPECT_FALSE(base64url_decode("a==="));
  // Bits below the last byte must be zero (found by fuzz target sim_requests): one text per byte
  // string, as dropshot's decoder insists.
  EXPECT_EQ(base64url_decode("YQ=="), "a");
  EXPECT_FALSE(base64url_decode("YR=="));
  EXPECT_EQ(base64url_decode("YWI="), "ab");
  EXPECT_FALSE(base64url_decode("YWJ="));
}

TEST(Uuid, GeneratesV4AndParsesBothForms) {
  const std::string id = new_uuid();
  EXPECT_TRUE(is_uuid(id));
  EXPECT_EQ(id[14], '4');
  EXPECT_NE(new_uuid(), id);
  EXPECT_EQ(parse_uuid("0123456789ABCDEF0123456789abcdef"), "01234567-89ab-cdef-0123-456789abcdef");
  EXPECT_FALSE(parse_uuid("0123456789abcdef"));
}

TEST(Names, NameOrIdPrefersUuid) {
  auto id = ParseNameOrId("ABCDEF01-2345-4678-9ABC-DEF012345678");
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(id->is_id);
  EXPECT_EQ(id->value, "abcdef01-2345-4678-9abc-def012345678");
  auto name = ParseNameOrId("pv-a");
  ASSERT_TRUE(name.ok());
  EXPECT_FALSE(name->is_id);
  auto bad = ParseNameOrId("pv_a");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "name contains invalid character: \"_\" (allowed characters are lowercase ASCII, "
            "digits, and \"-\")");
  EXPECT_TRUE(ValidateName("pv-a").ok());
  EXPECT_EQ(ValidateName("a\xc3\xa9").message(),
            "name contains invalid character: \"\xc3\xa9\" (allowed characters are lowercase "
            "ASCII, digits, and \"-\")");
}

TEST(JsonReader, ParseErrorsAreSerdeTextsWithoutThrowing) {
  auto parsed = ParseJsonText("{\"size\": 1}");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ((*parsed)["size"], 1);
  EXPECT_EQ(ParseJsonText("").status().message(), "EOF while parsing a value at line 1 column 0");
  EXPECT_EQ(ParseJsonText("{\"a\": ").status().message(),
            "EOF while parsing a value at line 1 column 6");
  EXPECT_EQ(ParseJsonText("{\"a\": x}").status().message(), "expected value at line 1 column 7");
  EXPECT_EQ(ParseJsonText("{\"size\": 1e999}").status().message(),
            "number out of range at line 1 column 14");
  auto reader = ObjectReader::Open(nlohmann::json::array(), "DiskCreate");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(), "invalid type: sequence, expected struct DiskCreate");
  const nlohmann::json body = {{"size", -1}, {"name", "x"}};
  auto fields = ObjectReader::Open(body, "DiskCreate");
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(fields->U64("size").status().message(), "invalid value: integer `-1`, expected u64");
  EXPECT_EQ(fields->String("nope").status().message(), "missing field `nope`");
}

TEST(Url, SplitsDecodesAndRejectsTricks) {
  EXPECT_EQ(SplitPath("/v1/disks/pv%2Da").segments,
            (std::vector<std::string>{"v1", "disks", "pv-a"}));
  EXPECT_FALSE(SplitPath("/v1/%2E%2E/x").error.empty());
  EXPECT_FALSE(SplitPath("/v1/a%2fb").error.empty());
  EXPECT_FALSE(SplitPath("/v1/a%2").error.empty());
  auto query = ParseQuery("project=demo&limit=5&x=a+b%21");
  ASSERT_TRUE(query);
  EXPECT_EQ(query->at(2).second, "a b!");
  EXPECT_FALSE(ParseQuery("a=%zz"));
}

TEST(Router, MatchesOperationsAndMethods) {
  auto match = MatchRoute("POST", {"v1", "instances", "vm", "disks", "attach"});
  EXPECT_EQ(match.status, RouteStatus::kMatched);
  EXPECT_EQ(match.operation, "instance_disk_attach");
  EXPECT_EQ(match.params.at("instance"), "vm");
  EXPECT_EQ(MatchRoute("PATCH", {"v1", "disks", "x"}).status, RouteStatus::kMethodNotAllowed);
  EXPECT_EQ(MatchRoute("GET", {"v1", "disks", ""}).status, RouteStatus::kNotFound);
  EXPECT_EQ(KnownOperations().size(), 24U);
}

TEST(FaultSequence, DeterministicPerSeed) {
  FaultRule rule;
  rule.operation = "disk_view";
  rule.error_500 = 0.3;
  rule.drop = 0.2;
  rule.latency_ms = 10;
  rule.jitter_ms = 100;
  auto run = [&](uint64_t seed) {
    Faults faults;
    faults.configure(seed, {rule});
    std::vector<std::tuple<int, bool, uint64_t>> out;
    for (int i = 0; i < 500; ++i) {
      auto decision = faults.decide(i % 3 == 0 ? "disk_list" : "disk_view", "GET", "/v1/disks/x");
      out.emplace_back(decision.status, decision.drop, decision.delay_ms);
    }
    return out;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
  int errors = 0;
  for (const auto& [status, drop, delay] : run(9)) {
    errors += status == 500;
    EXPECT_TRUE(status == 0 || status == 500);
    EXPECT_LE(delay, 110U);
  }
  EXPECT_GT(errors, 60);  // ~0.3 * 333
  EXPECT_LT(errors, 150);
}

TEST(FaultRules, FlagSyntax) {
  FaultRule rule = Faults::rule_from_flag("POST /v1/disks:500=0.5,429=0.25,retry_after_s=4");
  EXPECT_EQ(rule.method, "POST");
  EXPECT_EQ(rule.path_prefix, "/v1/disks");
  EXPECT_DOUBLE_EQ(rule.error_500, 0.5);
  EXPECT_EQ(rule.retry_after_s, 4U);
  EXPECT_EQ(Faults::rule_from_flag("disk_create:drop=1").operation, "disk_create");
  EXPECT_THROW(Faults::rule_from_flag("nope:500=1"), std::invalid_argument);
  EXPECT_THROW(Faults::rule_from_flag("disk_create:500=x"), std::invalid_argument);
}

}  // namespace
}  // namespace oxide_sim
