// Structured logging: one record per line, JSON and text, empty fields dropped, secrets redacted.
#include "util/log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/log_capture.h"

namespace oxide {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void TearDown() override { log::Configure(log::Level::kInfo, log::Format::kText); }
  std::vector<std::string> Lines() const { return log_.Lines(); }
  testing::LogCapture log_;
};

TEST_F(LogTest, JsonRecordsAreOneParsableObjectPerLine) {
  log::Configure(log::Level::kInfo, log::Format::kJson);
  log::Info("volume created\nsecond line",
            {{"rpc", "CreateVolume"}, {"volume_id", "v\"1"}, {"empty", ""}});
  auto lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  auto record = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(record["level"], "info");
  EXPECT_EQ(record["msg"], "volume created\nsecond line");
  EXPECT_EQ(record["rpc"], "CreateVolume");
  EXPECT_EQ(record["volume_id"], "v\"1");
  EXPECT_FALSE(record.contains("empty"));
  EXPECT_TRUE(record.contains("time"));
}

TEST_F(LogTest, NumericFieldsAreJsonNumbersAndPlainInText) {
  log::Configure(log::Level::kInfo, log::Format::kJson);
  log::Info("rpc ok", {{"duration_ms", log::MillisNumber(std::chrono::microseconds(24741))},
                       {"count", log::Num(int64_t{-3})},
                       {"served", log::Num(uint64_t{7})},
                       {"delivered", log::Bool(false)},
                       {"code", "OK"}});
  log::Configure(log::Level::kInfo, log::Format::kText);
  log::Info("rpc ok", {{"duration_ms", log::MillisNumber(std::chrono::microseconds(24741))}});
  auto lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  auto record = nlohmann::json::parse(lines[0]);
  ASSERT_TRUE(record["duration_ms"].is_number()) << lines[0];
  EXPECT_DOUBLE_EQ(record["duration_ms"].get<double>(), 24.741);
  EXPECT_EQ(record["count"], -3);
  EXPECT_EQ(record["served"], 7);
  EXPECT_EQ(record["delivered"], false);
  EXPECT_EQ(record["code"], "OK");
  EXPECT_NE(lines[0].find("\"duration_ms\":24.741"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(" duration_ms=24.741"), std::string::npos) << lines[1];
}

// "time=2026-11-22T10:23:11.123456Z level=..." (checked by hand: std::regex trips GCC 12's
// maybe-uninitialized warning in the sanitizer build).
bool HasUtcMicrosecondStamp(const std::string& line, std::string* seconds) {
  const std::string pattern = "time=dddd-dd-ddTdd:dd:dd.ddddddZ level=";
  if (line.size() < pattern.size()) return false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(line[i])) != 0;
    if (pattern[i] == 'd' ? !digit : line[i] != pattern[i]) return false;
  }
  *seconds = line.substr(5, 19);
  return true;
}

TEST_F(LogTest, RecordsCarryTheUtcTimeToTheMicrosecond) {
  const std::time_t before = std::time(nullptr);
  log::Info("first");
  log::Info("second");
  const std::time_t after = std::time(nullptr);
  auto lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  for (const std::string& line : lines) {
    std::string seconds;
    ASSERT_TRUE(HasUtcMicrosecondStamp(line, &seconds)) << line;
    std::tm utc{};
    ASSERT_NE(strptime(seconds.c_str(), "%Y-%m-%dT%H:%M:%S", &utc), nullptr);
    const std::time_t logged = timegm(&utc);
    EXPECT_GE(logged, before) << line;
    EXPECT_LE(logged, after) << line;
  }
}

TEST_F(LogTest, TextRecordsQuoteValuesWithSpaces) {
  log::Configure(log::Level::kInfo, log::Format::kText);
  log::Info("hello world", {{"k", "a b"}, {"plain", "x"}});
  auto lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("level=info msg=\"hello world\" k=\"a b\" plain=x"), std::string::npos)
      << lines[0];
}

TEST_F(LogTest, LevelsBelowTheMinimumAreDropped) {
  log::Configure(log::Level::kWarn, log::Format::kText);
  log::Debug("d");
  log::Info("i");
  log::Warn("w");
  log::Error("e");
  auto lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("msg=w"), std::string::npos);
  EXPECT_NE(lines[1].find("msg=e"), std::string::npos);
}

TEST_F(LogTest, RegisteredSecretsNeverReachTheLog) {
  const std::string secret = "oxide-token-logtest-9f8e7d";
  log::RegisterSecret(log::SecretKind::kOxideToken, secret);
  for (auto format : {log::Format::kText, log::Format::kJson}) {
    log::Configure(log::Level::kDebug, format);
    log::Error("request failed with token " + secret, {{"header", "Bearer " + secret}});
  }
  std::string all = log_.Text();
  EXPECT_EQ(all.find(secret), std::string::npos) << all;
  EXPECT_NE(all.find("[REDACTED]"), std::string::npos);
  EXPECT_EQ(log::Redact("x" + secret + "y" + secret), "x[REDACTED]y[REDACTED]");
}

TEST_F(LogTest, EachKindKeepsItsCurrentAndPreviousSecretOnly) {
  const std::string first = "oxide-token-rotation-1-aaaa";
  const std::string second = "oxide-token-rotation-2-bbbb";
  const std::string third = "oxide-token-rotation-3-cccc";
  const std::string service_account = "kubernetes-sa-token-zzzz";
  log::RegisterSecret(log::SecretKind::kKubernetesToken, service_account);
  log::RegisterSecret(log::SecretKind::kOxideToken, first);
  log::RegisterSecret(log::SecretKind::kOxideToken, second);
  log::RegisterSecret(log::SecretKind::kOxideToken, second);  // a re-read changes nothing
  EXPECT_EQ(log::Redact(first + " " + second), "[REDACTED] [REDACTED]");
  log::RegisterSecret(log::SecretKind::kOxideToken, third);
  // Two rotations ago: no longer checked; the current, the previous and the other kind still are.
  EXPECT_EQ(log::Redact(first), first);
  EXPECT_EQ(log::Redact(second + " " + third + " " + service_account),
            "[REDACTED] [REDACTED] [REDACTED]");
  log::Error("rotated", {{"old", second}, {"new", third}, {"sa", service_account}});
  std::string all = log_.Text();
  EXPECT_EQ(all.find(second), std::string::npos) << all;
  EXPECT_EQ(all.find(third), std::string::npos) << all;
  EXPECT_EQ(all.find(service_account), std::string::npos) << all;
}

// Records written on two threads while a third rotates the token, one rotation at a time (the
// next only once both writers have logged with the current one, so a writer holds the current
// or the previous token): no record holds a token (TSan: no race on the set).
TEST_F(LogTest, RecordsWrittenDuringARotationHoldNoRegisteredToken) {
  constexpr int kRotations = 200;
  std::vector<std::string> tokens;
  for (int i = 0; i < kRotations; ++i)
    tokens.push_back("rotating-oxide-token-" + std::to_string(1000 + i));
  log::RegisterSecret(log::SecretKind::kOxideToken, tokens[0]);
  std::atomic<int> current{0};
  std::atomic<bool> done{false};
  std::atomic<int> seen[2] = {-1, -1};
  auto writer = [&](int w) {
    while (!done.load()) {
      const int i = current.load();
      log::Info("calling Oxide", {{"authorization", "Bearer " + tokens[i]}});
      seen[w].store(i);
    }
  };
  std::thread a(writer, 0), b(writer, 1);
  for (int i = 1; i < kRotations; ++i) {
    log::RegisterSecret(log::SecretKind::kOxideToken, tokens[i]);
    current.store(i);
    while (seen[0].load() < i || seen[1].load() < i)
      std::this_thread::yield();
  }
  done = true;
  a.join();
  b.join();
  const std::string all = log_.Text();
  for (const std::string& token : tokens)
    EXPECT_EQ(all.find(token), std::string::npos) << token;
  EXPECT_NE(all.find("[REDACTED]"), std::string::npos);
}

TEST_F(LogTest, ValuesShorterThanEverySecretAreWrittenAsTheyAre) {
  log::RegisterSecret(log::SecretKind::kOxideToken, "a-secret-of-thirty-two-bytes-xx");
  log::Info("short", {{"k", "v"}});
  EXPECT_EQ(log::Redact("tiny"), "tiny");
  auto lines = Lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("msg=short k=v"), std::string::npos) << lines.back();
}

TEST(LogParse, LevelsAndFormats) {
  log::Level level;
  log::Format format;
  EXPECT_TRUE(log::ParseLevel("warn", &level));
  EXPECT_EQ(level, log::Level::kWarn);
  EXPECT_FALSE(log::ParseLevel("WARN", &level));
  EXPECT_TRUE(log::ParseFormat("json", &format));
  EXPECT_EQ(format, log::Format::kJson);
  EXPECT_FALSE(log::ParseFormat("yaml", &format));
}

TEST(LogMillis, DurationsAreMillisecondsRoundedToTheMicrosecond) {
  using std::chrono::nanoseconds;
  EXPECT_EQ(log::Millis(nanoseconds(0)), "0.000");
  EXPECT_EQ(log::Millis(nanoseconds(1'234'499)), "1.234");
  EXPECT_EQ(log::Millis(nanoseconds(1'234'500)), "1.235");
  EXPECT_EQ(log::Millis(nanoseconds(999'999'600)), "1000.000");
  EXPECT_EQ(log::Millis(nanoseconds(45'000)), "0.045");
  EXPECT_EQ(log::Millis(nanoseconds(-2'500'000)), "-2.500");
}

}  // namespace
}  // namespace oxide
