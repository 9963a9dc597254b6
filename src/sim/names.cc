#include "names.h"

#include <optional>

#include "ids.h"

namespace oxide_sim {

namespace {

std::optional<std::string> NameProblem(const std::string& text) {
  if (text.size() > 63) return "name may contain at most 63 characters";
  if (text.empty()) return "name requires at least one character";
  if (!(text[0] >= 'a' && text[0] <= 'z'))
    return "name must begin with an ASCII lowercase character";
  for (size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok) {
      // The server prints the offending char (a Rust char, so a whole UTF-8 sequence).
      size_t length = 1;
      const auto lead = static_cast<unsigned char>(c);
      if (lead >= 0xf0)
        length = 4;
      else if (lead >= 0xe0)
        length = 3;
      else if (lead >= 0xc0)
        length = 2;
      return "name contains invalid character: \"" + text.substr(i, length) +
             "\" (allowed characters are lowercase ASCII, digits, and \"-\")";
    }
  }
  if (text.back() == '-') return "name cannot end with \"-\"";
  if (parse_uuid(text)) return "name cannot be a UUID to avoid ambiguity with IDs";
  return std::nullopt;
}

}  // namespace

oxide::Status ValidateName(const std::string& text) {
  if (auto problem = NameProblem(text)) return oxide::InvalidArgument(*problem);
  return oxide::Status::Ok();
}

oxide::StatusOr<NameOrId> ParseNameOrId(const std::string& text) {
  if (auto id = parse_uuid(text)) return NameOrId{true, *id};
  if (auto problem = NameProblem(text)) return oxide::InvalidArgument(*problem);
  return NameOrId{false, text};
}

}  // namespace oxide_sim
