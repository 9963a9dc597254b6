#include "url.h"

namespace oxide_sim {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int high = HexValue(text[i + 1]);
      const int low = HexValue(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

PathSplit SplitPath(std::string_view raw_path) {
  PathSplit result;
  if (raw_path.empty() || raw_path.front() != '/') {
    result.error = "path must start with \"/\"";
    return result;
  }
  size_t start = 1;
  while (start <= raw_path.size()) {
    size_t end = raw_path.find('/', start);
    if (end == std::string_view::npos) end = raw_path.size();
    const std::string_view raw_segment = raw_path.substr(start, end - start);
    auto decoded = PercentDecode(raw_segment, false);
    if (!decoded) {
      result.error =
          "invalid percent-encoding in path segment \"" + std::string(raw_segment) + "\"";
      return result;
    }
    if (*decoded == "." || *decoded == "..") {
      result.error = "dot-segments are not allowed in paths";
      return result;
    }
    if (decoded->find('/') != std::string::npos) {
      result.error = "encoded \"/\" is not allowed in a path segment";
      return result;
    }
    if (decoded->find('\0') != std::string::npos) {
      result.error = "encoded NUL is not allowed in a path segment";
      return result;
    }
    // Empty segments (e.g. a trailing slash) are kept, so such paths match no route.
    result.segments.push_back(std::move(*decoded));
    start = end + 1;
  }
  return result;
}

std::optional<QueryPairs> ParseQuery(std::string_view raw_query) {
  QueryPairs pairs;
  size_t start = 0;
  while (start < raw_query.size()) {
    size_t end = raw_query.find('&', start);
    if (end == std::string_view::npos) end = raw_query.size();
    const std::string_view item = raw_query.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const size_t equals = item.find('=');
    auto key = PercentDecode(item.substr(0, equals), true);
    auto value = PercentDecode(
        equals == std::string_view::npos ? std::string_view{} : item.substr(equals + 1), true);
    if (!key || !value) return std::nullopt;
    pairs.emplace_back(std::move(*key), std::move(*value));
  }
  return pairs;
}

}  // namespace oxide_sim
