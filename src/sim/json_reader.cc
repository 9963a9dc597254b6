#include "json_reader.h"

#include "ids.h"

namespace oxide_sim {
namespace {

bool g_reject_unknown_fields = false;

std::string quote_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += "`" + names[i] + "`";
  }
  return out;
}

[[noreturn]] void invalid_type(const nlohmann::json& value, const std::string& expected) {
  throw BodyError("invalid type: " + describe_unexpected(value) + ", expected " + expected);
}

// serde_json's line/column (1-based line, column = bytes consumed on that line).
std::string position_of(const std::string& text, size_t offset) {
  size_t line = 1;
  size_t column = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
  }
  return " at line " + std::to_string(line) + " column " + std::to_string(column);
}

}  // namespace

nlohmann::json parse_json_text(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    const size_t offset = error.byte == 0 ? 0 : error.byte - 1;
    bool only_space = true;
    for (size_t i = offset; i < text.size(); ++i) {
      if (text[i] != ' ' && text[i] != '\n' && text[i] != '\t' && text[i] != '\r') {
        only_space = false;
      }
    }
    if (offset >= text.size() || only_space) {
      throw BodyError("EOF while parsing a value" + position_of(text, text.size()));
    }
    throw BodyError("expected value" + position_of(text, offset + 1));
  } catch (const nlohmann::json::out_of_range& error) {
    // A number too large for a double (found by fuzz target sim_requests). nlohmann names the
    // number ("number overflow parsing '1e999'"); serde points past its end.
    const std::string what = error.what();
    const size_t open = what.find('\'');
    const size_t close = open == std::string::npos ? open : what.find('\'', open + 1);
    size_t end = text.size();
    if (close != std::string::npos) {
      const std::string number = what.substr(open + 1, close - open - 1);
      if (const size_t at = text.find(number); at != std::string::npos) end = at + number.size();
    }
    throw BodyError("number out of range" + position_of(text, end));
  }
}

std::string describe_unexpected(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      return "string \"" + value.get<std::string>() + "\"";
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_integer:
      return "integer `" + value.dump() + "`";
    case nlohmann::json::value_t::number_float:
      return "floating point `" + value.dump() + "`";
    case nlohmann::json::value_t::boolean:
      return std::string("boolean `") + (value.get<bool>() ? "true" : "false") + "`";
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "map";
    case nlohmann::json::value_t::array:
      return "sequence";
    default:
      return "value";
  }
}

std::string check_variant(const nlohmann::json& value, const std::vector<std::string>& variants) {
  if (!value.is_string()) invalid_type(value, "a string");
  const std::string text = value.get<std::string>();
  for (const auto& candidate : variants) {
    if (candidate == text) return text;
  }
  throw BodyError("unknown variant `" + text + "`, expected one of " + quote_list(variants));
}

void ObjectReader::set_reject_unknown_fields(bool reject) {
  g_reject_unknown_fields = reject;
}

ObjectReader::ObjectReader(const nlohmann::json& value, std::string struct_name)
    : object_(value), struct_name_(std::move(struct_name)) {
  if (!value.is_object()) invalid_type(value, "struct " + struct_name_);
}

bool ObjectReader::has(const std::string& key) const {
  auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const nlohmann::json* ObjectReader::raw(const std::string& key) {
  known_.insert(key);
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

const nlohmann::json& ObjectReader::required(const std::string& key) {
  const nlohmann::json* value = raw(key);
  if (value == nullptr) throw BodyError("missing field `" + key + "`");
  return *value;
}

std::string ObjectReader::string(const std::string& key) {
  const nlohmann::json& value = required(key);
  if (!value.is_string()) invalid_type(value, "a string");
  return value.get<std::string>();
}

std::string ObjectReader::description(const std::string& key) {
  constexpr size_t kMaxDescriptionBytes = 512;
  std::string text = string(key);
  if (text.size() > kMaxDescriptionBytes) {
    throw BodyError(key + ": " + std::to_string(text.size()) + " bytes; a description is at most " +
                    std::to_string(kMaxDescriptionBytes) + " bytes");
  }
  return text;
}

std::optional<std::string> ObjectReader::optional_string(const std::string& key) {
  const nlohmann::json* value = raw(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_string()) invalid_type(*value, "a string");
  return value->get<std::string>();
}

uint64_t ObjectReader::u64(const std::string& key, const char* expected) {
  const nlohmann::json& value = required(key);
  if (value.is_number_integer() && value.get<long long>() < 0) {
    throw BodyError("invalid value: " + describe_unexpected(value) + ", expected " + expected);
  }
  if (!value.is_number_unsigned()) invalid_type(value, expected);
  return value.get<uint64_t>();
}

std::optional<uint64_t> ObjectReader::optional_u64(const std::string& key, const char* expected) {
  const nlohmann::json* value = raw(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  return u64(key, expected);
}

bool ObjectReader::boolean(const std::string& key, std::optional<bool> default_value) {
  const nlohmann::json* value = raw(key);
  if (value == nullptr && default_value) return *default_value;
  if (value == nullptr) throw BodyError("missing field `" + key + "`");
  if (!value->is_boolean()) invalid_type(*value, "a boolean");
  return value->get<bool>();
}

std::string ObjectReader::name(const std::string& key) {
  const std::string text = string(key);
  if (auto problem = name_error(text)) throw BodyError(*problem);
  return text;
}

std::optional<std::string> ObjectReader::optional_name(const std::string& key) {
  if (!has(key)) {
    raw(key);
    return std::nullopt;
  }
  return name(key);
}

NameOrId ObjectReader::name_or_id(const std::string& key) {
  const std::string text = string(key);
  std::string problem;
  auto parsed = parse_name_or_id(text, &problem);
  if (!parsed) throw BodyError(problem);
  return *parsed;
}

std::optional<NameOrId> ObjectReader::optional_name_or_id(const std::string& key) {
  if (!has(key)) {
    raw(key);
    return std::nullopt;
  }
  return name_or_id(key);
}

std::string ObjectReader::uuid(const std::string& key) {
  const std::string text = string(key);
  auto parsed = parse_uuid(text);
  if (!parsed) throw BodyError(uuid_parse_error(text));
  return *parsed;
}

std::string ObjectReader::variant(const std::string& key,
                                  const std::vector<std::string>& variants) {
  return check_variant(required(key), variants);
}

void ObjectReader::finish(const std::vector<std::string>& also_known) {
  if (!g_reject_unknown_fields) return;
  for (const auto& key : also_known)
    known_.insert(key);
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (known_.count(it.key()) == 0) {
      std::vector<std::string> expected(known_.begin(), known_.end());
      throw BodyError("unknown field `" + it.key() + "`, expected one of " + quote_list(expected));
    }
  }
}

}  // namespace oxide_sim
