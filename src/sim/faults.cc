#include "faults.h"

#include <algorithm>
#include <stdexcept>

#include "router.h"

namespace oxide_sim {
namespace {

bool rule_matches(const FaultRule& rule, const std::string& operation, const std::string& method,
                  const std::string& path) {
  if (!rule.operation.empty() && rule.operation != "*" && rule.operation != operation) return false;
  if (!rule.method.empty() && rule.method != method) return false;
  if (!rule.path_prefix.empty() && path.rfind(rule.path_prefix, 0) != 0) return false;
  return true;
}

double rate(const nlohmann::json& value, const char* key) {
  const double r = value.value(key, 0.0);
  if (r < 0.0 || r > 1.0) throw std::invalid_argument(std::string(key) + " must be within [0, 1]");
  return r;
}

}  // namespace

void Faults::configure(uint64_t seed, std::vector<FaultRule> rules) {
  rules_ = std::move(rules);
  reseed(seed);
}

void Faults::reseed(uint64_t seed) {
  seed_ = seed;
  state_ = seed;
}

// splitmix64: tiny, fully specified, so sequences are stable across platforms.
double Faults::next_unit() {
  state_ += 0x9e3779b97f4a7c15ULL;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

FaultDecision Faults::decide(const std::string& operation, const std::string& method,
                             const std::string& path) {
  FaultDecision decision;
  for (const FaultRule& rule : rules_) {
    if (!rule_matches(rule, operation, method, path)) continue;
    decision.matched = true;
    // Always draw three numbers per matched request, whatever the outcome.
    const double error_draw = next_unit();
    const double drop_draw = next_unit();
    const double jitter_draw = next_unit();
    if (error_draw < rule.error_500) {
      decision.status = 500;
    } else if (error_draw < rule.error_500 + rule.error_503) {
      decision.status = 503;
    } else if (error_draw < rule.error_500 + rule.error_503 + rule.error_429) {
      decision.status = 429;
      decision.retry_after_s = rule.retry_after_s;
    }
    decision.drop = decision.status == 0 && drop_draw < rule.drop;
    decision.delay_ms =
        rule.latency_ms + static_cast<uint64_t>(jitter_draw * static_cast<double>(rule.jitter_ms));
    break;
  }
  return decision;
}

FaultRule Faults::rule_from_json(const nlohmann::json& value) {
  if (!value.is_object()) throw std::invalid_argument("a fault rule must be a JSON object");
  static const std::vector<std::string> known = {
      "operation", "method", "path_prefix",   "error_500",  "error_503",
      "error_429", "drop",   "retry_after_s", "latency_ms", "jitter_ms"};
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      throw std::invalid_argument("unknown fault rule field \"" + it.key() + "\"");
    }
  }
  FaultRule rule;
  try {
    rule.operation = value.value("operation", "");
    rule.method = value.value("method", "");
    rule.path_prefix = value.value("path_prefix", "");
    rule.error_500 = rate(value, "error_500");
    rule.error_503 = rate(value, "error_503");
    rule.error_429 = rate(value, "error_429");
    rule.drop = rate(value, "drop");
    rule.retry_after_s = value.value("retry_after_s", 1U);
    rule.latency_ms = value.value("latency_ms", uint64_t{0});
    rule.jitter_ms = value.value("jitter_ms", uint64_t{0});
  } catch (const nlohmann::json::exception& problem) {
    throw std::invalid_argument(std::string("bad fault rule: ") + problem.what());
  }
  if (rule.error_500 + rule.error_503 + rule.error_429 > 1.0) {
    throw std::invalid_argument("error_500 + error_503 + error_429 must not exceed 1");
  }
  const auto& operations = KnownOperations();
  if (!rule.operation.empty() && rule.operation != "*" &&
      std::find(operations.begin(), operations.end(), rule.operation) == operations.end()) {
    throw std::invalid_argument("unknown operation \"" + rule.operation + "\"");
  }
  return rule;
}

FaultRule Faults::rule_from_flag(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) {
    throw std::invalid_argument("fault rule needs SELECTOR:key=value,...: " + text);
  }
  const std::string selector = text.substr(0, colon);
  nlohmann::json value = nlohmann::json::object();
  const size_t space = selector.find(' ');
  if (space != std::string::npos) {
    value["method"] = selector.substr(0, space);
    value["path_prefix"] = selector.substr(space + 1);
  } else if (!selector.empty() && selector.front() == '/') {
    value["path_prefix"] = selector;
  } else {
    value["operation"] = selector;
  }
  std::string rest = text.substr(colon + 1);
  size_t start = 0;
  while (start < rest.size()) {
    size_t end = rest.find(',', start);
    if (end == std::string::npos) end = rest.size();
    const std::string item = rest.substr(start, end - start);
    start = end + 1;
    const size_t equals = item.find('=');
    if (equals == std::string::npos) throw std::invalid_argument("bad fault setting: " + item);
    std::string key = item.substr(0, equals);
    const std::string number = item.substr(equals + 1);
    if (key == "500" || key == "503" || key == "429") key = "error_" + key;
    try {
      if (key.rfind("error_", 0) == 0 || key == "drop") {
        value[key] = std::stod(number);
      } else {
        value[key] = std::stoull(number);
      }
    } catch (const std::exception&) {
      throw std::invalid_argument("bad number in fault setting: " + item);
    }
  }
  return rule_from_json(value);
}

nlohmann::json Faults::to_json() const {
  nlohmann::json rules = nlohmann::json::array();
  for (const FaultRule& rule : rules_) {
    rules.push_back({{"operation", rule.operation},
                     {"method", rule.method},
                     {"path_prefix", rule.path_prefix},
                     {"error_500", rule.error_500},
                     {"error_503", rule.error_503},
                     {"error_429", rule.error_429},
                     {"drop", rule.drop},
                     {"retry_after_s", rule.retry_after_s},
                     {"latency_ms", rule.latency_ms},
                     {"jitter_ms", rule.jitter_ms}});
  }
  return {{"seed", seed_}, {"rules", rules}};
}

}  // namespace oxide_sim
