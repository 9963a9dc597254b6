// Fuzz target: what the simulator parses out of an HTTP request before any handler runs: the
// URL path and query (percent escapes, path tricks), JSON bodies (serde-style errors) and page
// tokens (URL-safe base64). The first byte picks the parser. Invariants: nothing crashes or
// throws (the parsers return their errors); a rejected body has a serde-style detail text; an
// accepted path has no "." or ".." segment and no '/' or NUL inside a segment; base64 that
// decodes encodes back to the same text.
#include <cstdlib>
#include <string>

#include "base64url.h"
#include "fuzz_target.h"
#include "json_reader.h"
#include "url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0: {
      const oxide_sim::PathSplit split = oxide_sim::SplitPath(text);
      if (split.error.empty()) {
        for (const std::string& segment : split.segments) {
          Expect(segment != "." && segment != "..");
          Expect(segment.find('/') == std::string::npos && segment.find('\0') == std::string::npos);
        }
      }
      break;
    }
    case 1:
      (void)oxide_sim::ParseQuery(text);  // only crashes matter
      break;
    case 2: {
      const auto json = oxide_sim::ParseJsonText(text);
      if (json.ok()) {
        (void)oxide_sim::DescribeUnexpected(*json);  // only crashes matter
      } else {
        Expect(!json.status().message().empty());  // the detail of the 400 the simulator answers
      }
      break;
    }
    default: {
      const auto decoded = oxide_sim::base64url_decode(text);
      if (decoded) Expect(oxide_sim::base64url_encode(*decoded) == text);
    }
  }
  return 0;
}
