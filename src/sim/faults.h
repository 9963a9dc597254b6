// Seeded, deterministic fault injection: per operation (operationId) or method+path-prefix
// rules giving 500/503/429 rates, added latency (fixed + jitter) and dropped connections.
// Same seed + same request sequence => same faults. Event-loop thread only.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace oxide_sim {

struct FaultRule {
  std::string operation;    // operationId; "" or "*" = any
  std::string method;       // "" = any
  std::string path_prefix;  // "" = any
  double error_500 = 0, error_503 = 0, error_429 = 0, drop = 0;
  uint32_t retry_after_s = 1;
  uint64_t latency_ms = 0, jitter_ms = 0;
};

struct FaultDecision {
  int status = 0;  // 0: no injected error
  uint32_t retry_after_s = 0;
  uint64_t delay_ms = 0;
  bool drop = false;  // process the request, then close the connection without answering
  bool matched = false;
};

class Faults {
 public:
  // Replaces the rules and restarts the random sequence from `seed`.
  void configure(uint64_t seed, std::vector<FaultRule> rules);
  void add_rule(FaultRule rule) { rules_.push_back(std::move(rule)); }
  void reseed(uint64_t seed);
  FaultDecision decide(const std::string& operation, const std::string& method,
                       const std::string& path);
  nlohmann::json to_json() const;
  uint64_t seed() const { return seed_; }

  // {"operation"|"method"|"path_prefix", "error_500", ...}. Throws std::invalid_argument.
  static FaultRule rule_from_json(const nlohmann::json& value);
  // CLI form "SELECTOR:key=value,..." (SELECTOR: operationId, "*", or "METHOD /prefix").
  static FaultRule rule_from_flag(const std::string& text);

 private:
  double next_unit();
  uint64_t seed_ = 0;
  uint64_t state_ = 0;
  std::vector<FaultRule> rules_;
};

}  // namespace oxide_sim
