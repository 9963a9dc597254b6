// The value syntaxes the settings parser shares between its options (numbers, durations,
// switches) and the one form of its error, "invalid setting --FLAG: why". Pure functions; any
// thread.
#pragma once

#include <chrono>
#include <string>

#include "util/status.h"

namespace oxide {

// INVALID_ARGUMENT "invalid setting --<flag>: <why>"; `flag` is written without the "--".
Status InvalidSetting(const char* flag, const std::string& why);

// A whole number in `base` between `min` and `max`; anything else is refused, naming `flag`.
Status ParseInt(const char* flag, const std::string& text, int min, int max, int base, int* out);

// A duration: a whole number with a unit, ms, s, m or h ("500ms", "60s", "2m"); "0" alone is
// zero. At most `max`.
Status ParseDuration(const char* flag, const std::string& text, std::chrono::milliseconds max,
                     std::chrono::milliseconds* out);

// true/1/empty (a bare switch) or false/0.
Status ParseBool(const char* flag, const std::string& text, bool* out);

}  // namespace oxide
