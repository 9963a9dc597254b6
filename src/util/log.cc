#include "util/log.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>

namespace oxide::log {
namespace {

std::atomic<Level> g_min_level{Level::kInfo};
std::atomic<Format> g_format{Format::kText};
std::atomic<int> g_fd{STDERR_FILENO};
// The secrets records are checked against: an immutable set, replaced whole when one is
// registered. A record takes a reference under g_set_mutex (a pointer copy, not the scan) and
// scans without a lock. A value shorter than the shortest secret cannot hold one: it is not
// scanned, and the set is not even looked at. (libstdc++ 12's std::atomic<std::shared_ptr> would
// do without the mutex, but its internal lock is invisible to TSan.)
struct SecretSet {
  std::vector<std::string> values;
  size_t shortest = SIZE_MAX;
};
constexpr size_t kSecretKinds = static_cast<size_t>(SecretKind::kKubernetesToken) + 1;
std::mutex g_set_mutex;
std::shared_ptr<const SecretSet> g_secrets;  // guarded by g_set_mutex
std::atomic<size_t> g_shortest_secret{SIZE_MAX};
std::mutex g_register_mutex;
// Per kind: the current value and the one before it. Guarded by g_register_mutex.
std::array<std::array<std::string, 2>, kSecretKinds> g_by_kind;

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

std::string RedactWith(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    for (size_t pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos)) {
      text.replace(pos, secret.size(), "[REDACTED]");
      pos += 10;
    }
  }
  return text;
}

// Appends the time as 2026-11-22T10:23:11.123456Z. The part up to the seconds is formatted once
// per second per thread.
void AppendTimestamp(std::string& out) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  thread_local time_t formatted_second = -1;
  thread_local char second_text[32];
  if (ts.tv_sec != formatted_second) {
    tm utc{};
    gmtime_r(&ts.tv_sec, &utc);
    strftime(second_text, sizeof second_text, "%Y-%m-%dT%H:%M:%S", &utc);
    formatted_second = ts.tv_sec;
  }
  out += second_text;
  char micros[9] = {'.', '0', '0', '0', '0', '0', '0', 'Z', '\0'};
  for (long us = ts.tv_nsec / 1000, i = 6; i >= 1; --i, us /= 10)
    micros[i] = static_cast<char>('0' + us % 10);
  out += micros;
}

// The secret set, loaded once per record and only when a value is long enough to hold one.
class RecordSecrets {
 public:
  const SecretSet* For(std::string_view value) {
    if (value.size() < g_shortest_secret.load(std::memory_order_acquire)) return nullptr;
    if (!loaded_) {
      std::lock_guard lock(g_set_mutex);
      set_ = g_secrets;
      loaded_ = true;
    }
    return set_ && value.size() >= set_->shortest ? set_.get() : nullptr;
  }

 private:
  bool loaded_ = false;
  std::shared_ptr<const SecretSet> set_;
};

// Appends `value`, or a copy with the registered secrets replaced when it holds one.
template <typename Append>
void AppendRedacted(std::string& out, std::string_view value, RecordSecrets& record,
                    Append append) {
  if (const SecretSet* set = record.For(value)) {
    for (const std::string& secret : set->values) {
      if (value.find(secret) != std::string_view::npos) {
        append(out, RedactWith(std::string(value), set->values));
        return;
      }
    }
  }
  append(out, value);
}

void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char esc[8];
          snprintf(esc, sizeof esc, "\\u%04x", c);
          out += esc;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void AppendTextValue(std::string& out, std::string_view s) {
  bool needs_quotes = s.empty() || s.find_first_of(" \"=\t\n") != std::string_view::npos;
  if (!needs_quotes) {
    out += s;
    return;
  }
  AppendJsonString(out, s);  // JSON escaping keeps a record on one line
}

}  // namespace

bool ParseLevel(std::string_view word, Level* level) {
  for (Level l : {Level::kDebug, Level::kInfo, Level::kWarn, Level::kError}) {
    if (word == LevelName(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

bool ParseFormat(std::string_view word, Format* format) {
  if (word == "text")
    *format = Format::kText;
  else if (word == "json")
    *format = Format::kJson;
  else
    return false;
  return true;
}

void Configure(Level min_level, Format format) {
  g_min_level = min_level;
  g_format = format;
}

void SetOutputFd(int fd) {
  g_fd = fd;
}

void RegisterSecret(SecretKind kind, std::string secret) {
  if (secret.empty()) return;
  std::lock_guard lock(g_register_mutex);
  std::array<std::string, 2>& slots = g_by_kind[static_cast<size_t>(kind)];
  // Registered again on every re-read of a token file: the set changes only with the value.
  if (slots[0] == secret) return;
  slots[1] = std::move(slots[0]);
  slots[0] = std::move(secret);
  auto set = std::make_shared<SecretSet>();
  for (const auto& kind_slots : g_by_kind) {
    for (const std::string& value : kind_slots) {
      if (value.empty()) continue;
      set->values.push_back(value);
      set->shortest = std::min(set->shortest, value.size());
    }
  }
  // The set first, then the length that lets a record look at it.
  const size_t shortest = set->shortest;
  {
    std::lock_guard set_lock(g_set_mutex);
    g_secrets = std::move(set);
  }
  g_shortest_secret.store(shortest, std::memory_order_release);
}

std::string Redact(std::string text) {
  RecordSecrets record;
  const SecretSet* set = record.For(text);
  return set == nullptr ? text : RedactWith(std::move(text), set->values);
}

bool Enabled(Level level) {
  return level >= g_min_level.load(std::memory_order_relaxed);
}

void Write(Level level, std::string_view message, Fields fields) {
  std::string line;
  line.reserve(256);
  RecordSecrets secrets;
  if (g_format.load(std::memory_order_relaxed) == Format::kJson) {
    line += "{\"time\":\"";
    AppendTimestamp(line);
    line += "\",\"level\":\"";
    line += LevelName(level);
    line += "\",\"msg\":";
    AppendRedacted(line, message, secrets, AppendJsonString);
    for (const Field& field : fields) {
      if (field.value.empty()) continue;
      line += ',';
      AppendJsonString(line, field.key);
      line += ':';
      if (field.number) {
        line += field.value;  // made by Num/MillisNumber: digits, '-', '.'
      } else {
        AppendRedacted(line, field.value, secrets, AppendJsonString);
      }
    }
    line += "}\n";
  } else {
    line += "time=";
    AppendTimestamp(line);
    line += " level=";
    line += LevelName(level);
    line += " msg=";
    AppendRedacted(line, message, secrets, AppendTextValue);
    for (const Field& field : fields) {
      if (field.value.empty()) continue;
      line += ' ';
      line += field.key;
      line += '=';
      AppendRedacted(line, field.value, secrets, AppendTextValue);
    }
    line += '\n';
  }
  // One write per record keeps lines from different threads whole.
  // A log line that cannot be written (stderr closed, a full pipe) has nowhere to be reported
  // and must not fail the call that logged it.
  ssize_t ignored = ::write(g_fd.load(std::memory_order_relaxed), line.data(), line.size());
  (void)ignored;
}

std::string Millis(std::chrono::nanoseconds d) {
  // Integer arithmetic: this runs for every call's log record, and printf's %f is not cheap.
  const int64_t ns = d.count();
  const int64_t us = (ns < 0 ? ns - 500 : ns + 500) / 1000;  // rounded to the microsecond
  const uint64_t magnitude = us < 0 ? 0 - static_cast<uint64_t>(us) : static_cast<uint64_t>(us);
  std::string text = us < 0 ? "-" : "";
  text += std::to_string(magnitude / 1000);
  const auto fraction = static_cast<unsigned>(magnitude % 1000);
  text += '.';
  text += static_cast<char>('0' + fraction / 100);
  text += static_cast<char>('0' + fraction / 10 % 10);
  text += static_cast<char>('0' + fraction % 10);
  return text;
}

Number Num(int64_t value) {
  return {std::to_string(value)};
}
Number Num(uint64_t value) {
  return {std::to_string(value)};
}
Number Num(int value) {
  return {std::to_string(value)};
}
Number Bool(bool value) {
  return {value ? "true" : "false"};
}
Number MillisNumber(std::chrono::nanoseconds d) {
  return {Millis(d)};
}

}  // namespace oxide::log
