#include "json_reader.h"

#include "ids.h"

namespace oxide_sim {
namespace {

bool g_reject_unknown_fields = false;

std::string QuoteList(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += "`" + names[i] + "`";
  }
  return out;
}

oxide::Status InvalidType(const nlohmann::json& value, const std::string& expected) {
  return BodyError("invalid type: " + DescribeUnexpected(value) + ", expected " + expected);
}

// serde_json's line/column (1-based line, column = bytes consumed on that line).
std::string PositionOf(const std::string& text, size_t offset) {
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

// A SAX consumer that keeps only the first error: where it happened and which kind (nlohmann
// reports a syntax error as id 101, a number too large for a double as id 406). The parser
// hands the error object to parse_error() instead of throwing it.
class FirstError : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool /*value*/) override { return true; }
  bool number_integer(number_integer_t /*value*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*value*/) override { return true; }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return true; }
  bool string(string_t& /*value*/) override { return true; }
  bool binary(binary_t& /*value*/) override { return true; }
  bool start_object(std::size_t /*size*/) override { return true; }
  bool key(string_t& /*value*/) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t /*size*/) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::json::exception& error) override {
    position_ = position;
    last_token_ = last_token;
    number_overflow_ = error.id == 406;
    return false;
  }

  size_t position() const { return position_; }
  const std::string& last_token() const { return last_token_; }
  bool number_overflow() const { return number_overflow_; }

 private:
  size_t position_ = 0;
  std::string last_token_;
  bool number_overflow_ = false;
};

// The serde text for a body nlohmann rejected.
std::string DescribeParseFailure(const std::string& text) {
  FirstError sax;
  (void)nlohmann::json::sax_parse(text, &sax);  // false: the error is in `sax`
  if (sax.number_overflow()) {
    // A number too large for a double (found by fuzz target sim_requests). serde points past
    // its end; nlohmann's last token is the number's text.
    size_t end = text.size();
    if (const size_t at = text.find(sax.last_token());
        !sax.last_token().empty() && at != std::string::npos) {
      end = at + sax.last_token().size();
    }
    return "number out of range" + PositionOf(text, end);
  }
  const size_t offset = sax.position() == 0 ? 0 : sax.position() - 1;
  bool only_space = true;
  for (size_t i = offset; i < text.size(); ++i) {
    if (text[i] != ' ' && text[i] != '\n' && text[i] != '\t' && text[i] != '\r') {
      only_space = false;
    }
  }
  if (offset >= text.size() || only_space) {
    return "EOF while parsing a value" + PositionOf(text, text.size());
  }
  return "expected value" + PositionOf(text, offset + 1);
}

}  // namespace

oxide::Status BodyError(std::string detail) {
  return oxide::InvalidArgument(std::move(detail));
}

oxide::StatusOr<nlohmann::json> ParseJsonText(const std::string& text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return BodyError(DescribeParseFailure(text));
  return parsed;
}

std::string DescribeUnexpected(const nlohmann::json& value) {
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

oxide::StatusOr<std::string> CheckVariant(const nlohmann::json& value,
                                          const std::vector<std::string>& variants) {
  if (!value.is_string()) return InvalidType(value, "a string");
  const std::string text = value.get<std::string>();
  for (const auto& candidate : variants) {
    if (candidate == text) return text;
  }
  return BodyError("unknown variant `" + text + "`, expected one of " + QuoteList(variants));
}

void ObjectReader::SetRejectUnknownFields(bool reject) {
  g_reject_unknown_fields = reject;
}

oxide::StatusOr<ObjectReader> ObjectReader::Open(const nlohmann::json& value,
                                                 std::string struct_name) {
  if (!value.is_object()) return InvalidType(value, "struct " + struct_name);
  return ObjectReader(value, std::move(struct_name));
}

bool ObjectReader::Has(const std::string& key) const {
  auto it = object_->find(key);
  return it != object_->end() && !it->is_null();
}

const nlohmann::json* ObjectReader::Raw(const std::string& key) {
  known_.insert(key);
  auto it = object_->find(key);
  return it == object_->end() ? nullptr : &*it;
}

oxide::StatusOr<const nlohmann::json*> ObjectReader::Required(const std::string& key) {
  const nlohmann::json* value = Raw(key);
  if (value == nullptr) return BodyError("missing field `" + key + "`");
  return value;
}

oxide::StatusOr<std::string> ObjectReader::String(const std::string& key) {
  auto value = Required(key);
  if (!value.ok()) return value.status();
  if (!(*value)->is_string()) return InvalidType(**value, "a string");
  return (*value)->get<std::string>();
}

oxide::StatusOr<std::string> ObjectReader::Description(const std::string& key) {
  constexpr size_t kMaxDescriptionBytes = 512;
  auto text = String(key);
  if (!text.ok()) return text;
  if (text->size() > kMaxDescriptionBytes) {
    return BodyError(key + ": " + std::to_string(text->size()) +
                     " bytes; a description is at most " + std::to_string(kMaxDescriptionBytes) +
                     " bytes");
  }
  return text;
}

oxide::StatusOr<std::optional<std::string>> ObjectReader::OptionalString(const std::string& key) {
  const nlohmann::json* value = Raw(key);
  if (value == nullptr || value->is_null()) return std::optional<std::string>();
  if (!value->is_string()) return InvalidType(*value, "a string");
  return std::optional<std::string>(value->get<std::string>());
}

oxide::StatusOr<uint64_t> ObjectReader::U64(const std::string& key, const char* expected) {
  auto found = Required(key);
  if (!found.ok()) return found.status();
  const nlohmann::json& value = **found;
  if (value.is_number_integer() && value.get<long long>() < 0) {
    return BodyError("invalid value: " + DescribeUnexpected(value) + ", expected " + expected);
  }
  if (!value.is_number_unsigned()) return InvalidType(value, expected);
  return value.get<uint64_t>();
}

oxide::StatusOr<std::optional<uint64_t>> ObjectReader::OptionalU64(const std::string& key,
                                                                   const char* expected) {
  const nlohmann::json* value = Raw(key);
  if (value == nullptr || value->is_null()) return std::optional<uint64_t>();
  auto number = U64(key, expected);
  if (!number.ok()) return number.status();
  return std::optional<uint64_t>(*number);
}

oxide::StatusOr<bool> ObjectReader::Boolean(const std::string& key,
                                            std::optional<bool> default_value) {
  const nlohmann::json* value = Raw(key);
  if (value == nullptr && default_value) return *default_value;
  if (value == nullptr) return BodyError("missing field `" + key + "`");
  if (!value->is_boolean()) return InvalidType(*value, "a boolean");
  return value->get<bool>();
}

oxide::StatusOr<std::string> ObjectReader::Name(const std::string& key) {
  auto text = String(key);
  if (!text.ok()) return text;
  if (oxide::Status valid = ValidateName(*text); !valid.ok()) return valid;
  return text;
}

oxide::StatusOr<std::optional<std::string>> ObjectReader::OptionalName(const std::string& key) {
  if (!Has(key)) {
    Raw(key);
    return std::optional<std::string>();
  }
  auto name = Name(key);
  if (!name.ok()) return name.status();
  return std::optional<std::string>(*std::move(name));
}

oxide::StatusOr<NameOrId> ObjectReader::Selector(const std::string& key) {
  auto text = String(key);
  if (!text.ok()) return text.status();
  return ParseNameOrId(*text);
}

oxide::StatusOr<std::optional<NameOrId>> ObjectReader::OptionalSelector(const std::string& key) {
  if (!Has(key)) {
    Raw(key);
    return std::optional<NameOrId>();
  }
  auto selector = Selector(key);
  if (!selector.ok()) return selector.status();
  return std::optional<NameOrId>(*selector);
}

oxide::StatusOr<std::string> ObjectReader::Uuid(const std::string& key) {
  auto text = String(key);
  if (!text.ok()) return text;
  auto parsed = parse_uuid(*text);
  if (!parsed) return BodyError(uuid_parse_error(*text));
  return *parsed;
}

oxide::StatusOr<std::string> ObjectReader::Variant(const std::string& key,
                                                   const std::vector<std::string>& variants) {
  auto value = Required(key);
  if (!value.ok()) return value.status();
  return CheckVariant(**value, variants);
}

oxide::Status ObjectReader::Finish(const std::vector<std::string>& also_known) {
  if (!g_reject_unknown_fields) return oxide::Status::Ok();
  for (const auto& key : also_known)
    known_.insert(key);
  for (auto it = object_->begin(); it != object_->end(); ++it) {
    if (known_.count(it.key()) == 0) {
      std::vector<std::string> expected(known_.begin(), known_.end());
      return BodyError("unknown field `" + it.key() + "`, expected one of " + QuoteList(expected));
    }
  }
  return oxide::Status::Ok();
}

}  // namespace oxide_sim
