#include "recorded_exchange.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace oxide::testing {

const nlohmann::json& RecordedExchange() {
  static const nlohmann::json exchange = [] {
    const std::string path = std::string(OXIDE_NODE_TEST_DATA) + "/startup_taint_exchange.json";
    nlohmann::json parsed = nlohmann::json::parse(ReadFile(path), nullptr, false);
    EXPECT_TRUE(parsed.is_object()) << path << " is not a JSON object";
    return parsed;
  }();
  return exchange;
}

FakeKubernetesApi::Answer RecordedObject(const std::string& name) {
  EXPECT_TRUE(RecordedExchange().contains(name)) << name;
  return {.status = 200, .body = RecordedExchange().value(name, nlohmann::json()).dump()};
}

FakeKubernetesApi::Answer RecordedAnswer(const std::string& name) {
  const nlohmann::json& part = RecordedExchange().value(name, nlohmann::json::object());
  EXPECT_TRUE(part.contains("status")) << name;
  return {.status = part.value("status", 0), .body = part.value("body", nlohmann::json()).dump()};
}

}  // namespace oxide::testing
