// TextTable and the number formats: Markdown rows padded to each column's widest cell.
#include "text_table.h"

#include <algorithm>

namespace oxide::bench {
namespace {

// Characters of a UTF-8 string (the bytes that do not continue a character).
size_t Width(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

void TextTable::Print(std::FILE* out) const {
  std::vector<size_t> widths(header_.size(), 3);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], Width(row[i]));
  };
  widen(header_);
  for (const auto& row : rows_)
    widen(row);
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line = "|";
    for (size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      line += " " + cell + std::string(widths[i] - Width(cell), ' ') + " |";
    }
    std::fprintf(out, "%s\n", line.c_str());
  };
  print_row(header_);
  std::string rule = "|";
  for (size_t width : widths)
    rule += std::string(width + 2, '-') + "|";
  std::fprintf(out, "%s\n", rule.c_str());
  for (const auto& row : rows_)
    print_row(row);
}

std::string Fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string Ms(double ms) {
  if (ms < 10) return Fixed(ms, 2);
  if (ms < 100) return Fixed(ms, 1);
  return Fixed(ms, 0);
}

std::string MsPair(double p50, double p99) {
  return Ms(p50) + "/" + Ms(p99);
}

std::string FixedOr(const std::optional<double>& value, int decimals) {
  return value ? Fixed(*value, decimals) : kNotLogged;
}

}  // namespace oxide::bench
