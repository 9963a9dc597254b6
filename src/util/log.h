// Structured logging to stderr: one record per line, as JSON or as key=value text.
// Any thread may log. Values registered with RegisterSecret are replaced by "[REDACTED]"
// wherever they appear in a record, so a token cannot leak through a message or a field.
#pragma once

#include <chrono>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oxide::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class Format { kText, kJson };

// Parses "debug|info|warn|error" / "text|json"; false when the word is not one of them.
bool ParseLevel(std::string_view word, Level* level);
bool ParseFormat(std::string_view word, Format* format);

// Configure once at start, before other threads log.
void Configure(Level min_level, Format format);
// Writes records to this file descriptor instead of stderr (tests capture logs this way).
void SetOutputFd(int fd);
// Adds a value that must never appear in the log (e.g. the Oxide token). Thread-safe.
void RegisterSecret(std::string secret);
// Replaces every registered secret in `text`.
std::string Redact(std::string text);

bool Enabled(Level level);

// Fields with an empty value are left out of the record.
using Field = std::pair<std::string_view, std::string>;
using Fields = std::initializer_list<Field>;

void Write(Level level, std::string_view message, Fields fields = {});

inline void Debug(std::string_view m, Fields f = {}) {
  if (Enabled(Level::kDebug)) Write(Level::kDebug, m, f);
}
inline void Info(std::string_view m, Fields f = {}) {
  if (Enabled(Level::kInfo)) Write(Level::kInfo, m, f);
}
inline void Warn(std::string_view m, Fields f = {}) {
  Write(Level::kWarn, m, f);
}
inline void Error(std::string_view m, Fields f = {}) {
  Write(Level::kError, m, f);
}

// Formats a duration as milliseconds with microsecond precision, e.g. "0.042".
std::string Millis(std::chrono::nanoseconds d);

}  // namespace oxide::log
