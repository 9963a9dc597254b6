// Reads request bodies the way serde/dropshot does and fails with serde-style detail texts
// ("missing field `name`", "invalid type: string \"x\", expected u64", ...).
// Failures throw BodyError; callers wrap the text into the right 400. Any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "names.h"

namespace oxide_sim {

struct BodyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses a request body; an empty body is an EOF error, as in serde_json.
nlohmann::json parse_json_text(const std::string& text);

// serde's description of a JSON value in "invalid type" errors.
std::string describe_unexpected(const nlohmann::json& value);

// Field access for one JSON object that must be a struct named `struct_name`.
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& value, std::string struct_name);

  bool has(const std::string& key) const;             // present and not null
  const nlohmann::json* raw(const std::string& key);  // marks the key as known
  std::string string(const std::string& key);
  std::optional<std::string> optional_string(const std::string& key);
  // A resource description: a string of at most 512 bytes (Oxide stores it as STRING(512)).
  std::string description(const std::string& key);
  uint64_t u64(const std::string& key, const char* expected = "u64");
  std::optional<uint64_t> optional_u64(const std::string& key, const char* expected = "u64");
  bool boolean(const std::string& key, std::optional<bool> default_value = std::nullopt);
  std::string name(const std::string& key);
  std::optional<std::string> optional_name(const std::string& key);
  NameOrId name_or_id(const std::string& key);
  std::optional<NameOrId> optional_name_or_id(const std::string& key);
  std::string uuid(const std::string& key);
  // One of `variants` (a unit enum such as a tag).
  std::string variant(const std::string& key, const std::vector<std::string>& variants);
  // With unknown-field rejection on, fails on keys never asked for.
  void finish(const std::vector<std::string>& also_known = {});

  static void set_reject_unknown_fields(bool reject);

 private:
  const nlohmann::json& required(const std::string& key);
  const nlohmann::json& object_;
  std::string struct_name_;
  std::set<std::string> known_;
};

// Checks one value against a unit-variant list; throws "unknown variant" errors.
std::string check_variant(const nlohmann::json& value, const std::vector<std::string>& variants);

}  // namespace oxide_sim
