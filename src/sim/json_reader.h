// Reads request bodies the way serde/dropshot does and fails with serde-style detail texts
// ("missing field `name`", "invalid type: string \"x\", expected u64", ...).
// Failures are returned as an oxide::Status (kInvalidArgument) whose message is the detail
// text alone; callers wrap it into the right 400 (a body error, a bad page token). Nothing
// here throws. Any thread (SetRejectUnknownFields only before serving starts).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "names.h"
#include "util/status.h"

namespace oxide_sim {

// The failure of a body read: kInvalidArgument with serde's detail text.
oxide::Status BodyError(std::string detail);

// Parses a request body; an empty body is an EOF error, as in serde_json.
oxide::StatusOr<nlohmann::json> ParseJsonText(const std::string& text);

// serde's description of a JSON value in "invalid type" errors.
std::string DescribeUnexpected(const nlohmann::json& value);

// Field access for one JSON object that must be a struct named `struct_name`.
class ObjectReader {
 public:
  // Fails with "invalid type: ..., expected struct <name>" unless `value` is an object.
  // `value` must outlive the reader.
  static oxide::StatusOr<ObjectReader> Open(const nlohmann::json& value, std::string struct_name);

  bool Has(const std::string& key) const;             // present and not null
  const nlohmann::json* Raw(const std::string& key);  // marks the key as known
  oxide::StatusOr<std::string> String(const std::string& key);
  oxide::StatusOr<std::optional<std::string>> OptionalString(const std::string& key);
  // A resource description: a string of at most 512 bytes (Oxide stores it as STRING(512)).
  oxide::StatusOr<std::string> Description(const std::string& key);
  oxide::StatusOr<uint64_t> U64(const std::string& key, const char* expected = "u64");
  oxide::StatusOr<std::optional<uint64_t>> OptionalU64(const std::string& key,
                                                       const char* expected = "u64");
  oxide::StatusOr<bool> Boolean(const std::string& key,
                                std::optional<bool> default_value = std::nullopt);
  oxide::StatusOr<std::string> Name(const std::string& key);
  oxide::StatusOr<std::optional<std::string>> OptionalName(const std::string& key);
  // A NameOrId field (UUID first, else Name).
  oxide::StatusOr<NameOrId> Selector(const std::string& key);
  oxide::StatusOr<std::optional<NameOrId>> OptionalSelector(const std::string& key);
  oxide::StatusOr<std::string> Uuid(const std::string& key);
  // One of `variants` (a unit enum such as a tag).
  oxide::StatusOr<std::string> Variant(const std::string& key,
                                       const std::vector<std::string>& variants);
  // With unknown-field rejection on, fails on keys never asked for.
  oxide::Status Finish(const std::vector<std::string>& also_known = {});

  static void SetRejectUnknownFields(bool reject);

 private:
  ObjectReader(const nlohmann::json& value, std::string struct_name)
      : object_(&value), struct_name_(std::move(struct_name)) {}
  oxide::StatusOr<const nlohmann::json*> Required(const std::string& key);

  const nlohmann::json* object_;
  std::string struct_name_;
  std::set<std::string> known_;
};

// Checks one value against a unit-variant list; fails with "unknown variant" errors.
oxide::StatusOr<std::string> CheckVariant(const nlohmann::json& value,
                                          const std::vector<std::string>& variants);

}  // namespace oxide_sim
