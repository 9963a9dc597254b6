#include "backend/request_paths.h"

#include <cctype>

#include "config/validation.h"

namespace oxide::backend {

std::string PercentEncode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  return out;
}

Query& Query::Add(std::string_view key, std::string_view value) {
  pairs_.emplace_back(std::string(key), std::string(value));
  return *this;
}

Query& Query::AddIfSet(std::string_view key, std::string_view value) {
  if (!value.empty()) Add(key, value);
  return *this;
}

std::string Query::ToString() const {
  std::string out;
  for (const auto& [key, value] : pairs_) {
    out += out.empty() ? "?" : "&";
    out += PercentEncode(key) + "=" + PercentEncode(value);
  }
  return out;
}

std::string ObjectTarget(std::string_view collection, std::string_view name_or_id,
                         std::string_view project, std::string_view suffix) {
  std::string target = "/v1/" + std::string(collection) + "/" + PercentEncode(name_or_id);
  target += suffix;
  if (!IsUuid(name_or_id)) target += Query().Add("project", project).ToString();
  return target;
}

}  // namespace oxide::backend
