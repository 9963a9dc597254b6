// A Markdown table printed with aligned columns (widths counted in characters, not UTF-8 bytes),
// and the number formats the benchmark's tables share. Any thread, one table per thread.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace oxide::bench {

inline constexpr const char* kNoValue = "—";      // a figure that does not apply
inline constexpr const char* kNotLogged = "n/a";  // a figure the plugin did not log

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print(std::FILE* out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// `value` with `decimals` digits after the point.
std::string Fixed(double value, int decimals);
// A latency in ms with about three significant digits ("0.84", "12.3", "309").
std::string Ms(double ms);
// "p50/p99" in ms.
std::string MsPair(double p50, double p99);
// Fixed(value, decimals), or kNotLogged when absent.
std::string FixedOr(const std::optional<double>& value, int decimals);

}  // namespace oxide::bench
