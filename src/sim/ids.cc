#include "ids.h"

#include <cctype>
#include <cstdint>
#include <random>

namespace oxide_sim {
namespace {

std::mt19937_64& generator() {
  static std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

std::string new_uuid() {
  static constexpr char kHex[] = "0123456789abcdef";
  const uint64_t hi = generator()();
  const uint64_t lo = generator()();
  unsigned char bytes[16];
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<unsigned char>(hi >> (56 - 8 * i));
    bytes[8 + i] = static_cast<unsigned char>(lo >> (56 - 8 * i));
  }
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0f) | 0x40);
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3f) | 0x80);
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0x0f]);
  }
  return out;
}

bool is_uuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash_position = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_position ? text[i] != '-' : !is_hex(text[i])) return false;
  }
  return true;
}

std::optional<std::string> parse_uuid(std::string_view text) {
  if (is_uuid(text)) return canonical_uuid(text);
  if (text.size() != 32) return std::nullopt;
  for (char c : text) {
    if (!is_hex(c)) return std::nullopt;
  }
  std::string lower = canonical_uuid(text);
  return lower.substr(0, 8) + "-" + lower.substr(8, 4) + "-" + lower.substr(12, 4) + "-" +
         lower.substr(16, 4) + "-" + lower.substr(20);
}

std::string canonical_uuid(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string uuid_parse_error(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!is_hex(text[i]) && text[i] != '-') {
      return "UUID parsing failed: invalid character: expected an optional prefix of `urn:uuid:` "
             "followed by [0-9a-fA-F-], found `" +
             std::string(1, text[i]) + "` at " + std::to_string(i + 1);
    }
  }
  return "UUID parsing failed: invalid length: expected length 32 for simple format, found " +
         std::to_string(text.size());
}

}  // namespace oxide_sim
