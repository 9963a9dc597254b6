#include "util/log.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace oxide::log {
namespace {

std::atomic<Level> g_min_level{Level::kInfo};
std::atomic<Format> g_format{Format::kText};
std::atomic<int> g_fd{STDERR_FILENO};
std::atomic<bool> g_has_secrets{false};
std::mutex g_secrets_mutex;
std::vector<std::string> g_secrets;  // guarded by g_secrets_mutex

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

// Appends `value`, or a copy with the registered secrets replaced when it holds one. The caller
// holds g_secrets_mutex when `secrets` is not null.
template <typename Append>
void AppendRedacted(std::string& out, std::string_view value,
                    const std::vector<std::string>* secrets, Append append) {
  if (secrets != nullptr) {
    for (const std::string& secret : *secrets) {
      if (value.find(secret) != std::string_view::npos) {
        append(out, RedactWith(std::string(value), *secrets));
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

void RegisterSecret(std::string secret) {
  if (secret.empty()) return;
  std::lock_guard lock(g_secrets_mutex);
  // Registered again on every re-read of a token file: kept once, or the list (and the cost of
  // every record) would grow for as long as the plugin runs.
  if (std::find(g_secrets.begin(), g_secrets.end(), secret) != g_secrets.end()) return;
  g_secrets.push_back(std::move(secret));
  g_has_secrets = true;
}

std::string Redact(std::string text) {
  if (!g_has_secrets.load(std::memory_order_acquire)) return text;
  std::lock_guard lock(g_secrets_mutex);
  return RedactWith(std::move(text), g_secrets);
}

bool Enabled(Level level) {
  return level >= g_min_level.load(std::memory_order_relaxed);
}

void Write(Level level, std::string_view message, Fields fields) {
  std::string line;
  line.reserve(256);
  // One lock per record (not per field) while values are checked for secrets.
  std::unique_lock<std::mutex> lock;
  const std::vector<std::string>* secrets = nullptr;
  if (g_has_secrets.load(std::memory_order_acquire)) {
    lock = std::unique_lock(g_secrets_mutex);
    secrets = &g_secrets;
  }
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
  if (lock.owns_lock()) lock.unlock();
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
