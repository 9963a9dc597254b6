// Structured logging to stderr: one record per line, as JSON or as key=value text.
// Any thread may log. Values registered with RegisterSecret are replaced by "[REDACTED]"
// wherever they appear in a record, so a token cannot leak through a message or a field.
#pragma once

#include <chrono>
#include <cstdint>
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
// What a registered secret is. Each kind keeps its current value and the one before it (a record
// about a call made just before a rotation can still hold the old token), nothing older: the list
// a record is checked against stays at two values per kind however often a token rotates.
enum class SecretKind { kOxideToken, kKubernetesToken };
// A value that must never appear in the log; it becomes `kind`'s current one. Thread-safe.
void RegisterSecret(SecretKind kind, std::string secret);
// Replaces every registered secret in `text`.
std::string Redact(std::string text);

bool Enabled(Level level);

// A field's value that is a JSON number or boolean: written bare in JSON ("duration_ms":24.741,
// "delivered":true), as is in text.
struct Number {
  std::string text;  // already formatted, e.g. "24.741"; never empty
};
Number Num(int64_t value);
Number Num(uint64_t value);
Number Num(int value);
// A boolean, written bare in JSON (true/false) and as the same word in text.
Number Bool(bool value);
// Milliseconds with microsecond precision, e.g. 24.741 (see Millis).
Number MillisNumber(std::chrono::nanoseconds d);

// One key and its value. Fields with an empty value are left out of the record.
struct Field {
  Field(std::string_view k, std::string v) : key(k), value(std::move(v)) {}
  Field(std::string_view k, const char* v) : key(k), value(v == nullptr ? "" : v) {}
  Field(std::string_view k, std::string_view v) : key(k), value(v) {}
  Field(std::string_view k, Number n) : key(k), value(std::move(n.text)), number(true) {}
  template <typename First, typename Second>
  Field(const std::pair<First, Second>& p)  // NOLINT(google-explicit-constructor)
      : Field(std::string_view(p.first), p.second) {}
  std::string_view key;
  std::string value;
  bool number = false;
};
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
