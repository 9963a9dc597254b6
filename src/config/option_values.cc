#include "config/option_values.h"

#include <charconv>
#include <cstdint>

namespace oxide {

Status InvalidSetting(const char* flag, const std::string& why) {
  return InvalidArgument(std::string("invalid setting --") + flag + ": " + why);
}

Status ParseInt(const char* flag, const std::string& text, int min, int max, int base, int* out) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return InvalidSetting(flag, "\"" + text + "\" is not a number between " + std::to_string(min) +
                                    " and " + std::to_string(max));
  }
  *out = value;
  return Status::Ok();
}

Status ParseDuration(const char* flag, const std::string& text, std::chrono::milliseconds max,
                     std::chrono::milliseconds* out) {
  const Status bad = InvalidSetting(
      flag, "\"" + text + "\" is not a duration such as 500ms, 60s, 2m or 1h (at most " +
                std::to_string(max.count() / 1000) + "s)");
  int64_t number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || number < 0 || end == text.data()) return bad;
  const std::string unit(end, text.data() + text.size());
  int64_t unit_ms = 0;
  if (unit == "ms")
    unit_ms = 1;
  else if (unit == "s")
    unit_ms = 1000;
  else if (unit == "m")
    unit_ms = 60'000;
  else if (unit == "h")
    unit_ms = 3'600'000;
  else if (unit.empty() && number == 0)
    unit_ms = 1;
  else
    return bad;
  if (number > max.count() / unit_ms) return bad;
  *out = std::chrono::milliseconds(number * unit_ms);
  return Status::Ok();
}

Status ParseBool(const char* flag, const std::string& text, bool* out) {
  if (text == "true" || text == "1" || text.empty())
    *out = true;
  else if (text == "false" || text == "0")
    *out = false;
  else
    return InvalidSetting(flag, "\"" + text + "\" is not true or false");
  return Status::Ok();
}

}  // namespace oxide
