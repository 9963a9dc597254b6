// Cutting text to a byte budget without splitting a UTF-8 character: Oxide descriptions (512
// bytes) and values echoed in error messages. Pure; any thread.
#pragma once

#include <string>
#include <string_view>

namespace oxide {

// `text` if it fits in `max_bytes`; else its longest prefix on a character boundary followed by
// "…", all within `max_bytes` (an empty string when not even "…" fits).
std::string CutUtf8(std::string_view text, size_t max_bytes);

}  // namespace oxide
