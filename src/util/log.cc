#include "util/log.h"

#include <unistd.h>

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

std::string Timestamp() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm utc{};
  gmtime_r(&ts.tv_sec, &utc);
  char buf[40];
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  snprintf(buf + n, sizeof buf - n, ".%06ldZ", ts.tv_nsec / 1000);
  return buf;
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
  g_secrets.push_back(std::move(secret));
  g_has_secrets = true;
}

std::string Redact(std::string text) {
  if (!g_has_secrets.load(std::memory_order_acquire)) return text;
  std::lock_guard lock(g_secrets_mutex);
  for (const std::string& secret : g_secrets) {
    for (size_t pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos)) {
      text.replace(pos, secret.size(), "[REDACTED]");
      pos += 10;
    }
  }
  return text;
}

bool Enabled(Level level) {
  return level >= g_min_level.load(std::memory_order_relaxed);
}

void Write(Level level, std::string_view message, Fields fields) {
  std::string line;
  line.reserve(160);
  if (g_format.load(std::memory_order_relaxed) == Format::kJson) {
    line += "{\"time\":\"" + Timestamp() + "\",\"level\":\"" + LevelName(level) + "\",\"msg\":";
    AppendJsonString(line, Redact(std::string(message)));
    for (const auto& [key, value] : fields) {
      if (value.empty()) continue;
      line += ',';
      AppendJsonString(line, key);
      line += ':';
      AppendJsonString(line, Redact(value));
    }
    line += "}\n";
  } else {
    line += "time=" + Timestamp() + " level=" + LevelName(level) + " msg=";
    AppendTextValue(line, Redact(std::string(message)));
    for (const auto& [key, value] : fields) {
      if (value.empty()) continue;
      line += ' ';
      line += key;
      line += '=';
      AppendTextValue(line, Redact(value));
    }
    line += '\n';
  }
  // One write per record keeps lines from different threads whole.
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

}  // namespace oxide::log
