#include "util/utf8_cut.h"

namespace oxide {

std::string CutUtf8(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  constexpr std::string_view kEllipsis = "\u2026";
  if (max_bytes < kEllipsis.size()) return "";
  size_t end = max_bytes >= kEllipsis.size() ? max_bytes - kEllipsis.size() : 0;
  // Back up over continuation bytes (10xxxxxx) to the start of the character that would be cut.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end;
  return std::string(text.substr(0, end)) + std::string(kEllipsis);
}

}  // namespace oxide
