// Parsing the plugin's text log records: `time=... level=... msg="..." key=value ...`, values with
// spaces, quotes or '=' written as JSON strings.
#include "plugin_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <sstream>

namespace oxide::bench {
namespace {

std::optional<double> Number(const std::map<std::string, std::string>& fields,
                             const std::string& key) {
  auto it = fields.find(key);
  if (it == fields.end()) return std::nullopt;
  try {
    size_t used = 0;
    double value = std::stod(it->second, &used);
    if (used != it->second.size()) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<std::string> LogTail::NewLines() {
  std::vector<std::string> lines;
  const std::string chunk = Since(path_, offset_);
  offset_ += chunk.size();
  partial_ += chunk;
  size_t start = 0;
  for (size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(partial_.substr(start, end - start));
  partial_.erase(0, start);
  return lines;
}

std::string LogTail::Since(const std::string& path, size_t offset) {
  std::string text;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[65536];
  for (;;) {
    const ssize_t got = pread(fd, buffer, sizeof buffer, static_cast<off_t>(offset + text.size()));
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  close(fd);
  return text;
}

std::map<std::string, std::string> RecordFields(const std::string& line) {
  std::map<std::string, std::string> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ')
      ++i;
    const size_t equals = line.find('=', i);
    if (equals == std::string::npos) break;
    std::string key = line.substr(i, equals - i);
    std::string value;
    i = equals + 1;
    if (i < line.size() && line[i] == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) ++i;  // \" \\ and the like: the next char
        value.push_back(line[i]);
      }
      ++i;  // the closing quote
    } else {
      const size_t space = line.find(' ', i);
      const size_t end = space == std::string::npos ? line.size() : space;
      value = line.substr(i, end - i);
      i = end;
    }
    fields[std::move(key)] = std::move(value);
  }
  return fields;
}

bool IsRecord(const std::string& line, const std::string& message) {
  // Cheap test first: most lines are other records.
  if (line.find(message) == std::string::npos) return false;
  auto fields = RecordFields(line);
  auto it = fields.find("msg");
  return it != fields.end() && it->second == message;
}

ExitSummary ReadExitSummary(const std::string& log_text) {
  ExitSummary summary;
  std::istringstream log(log_text);
  for (std::string line; std::getline(log, line);) {
    if (IsRecord(line, "event loop turns")) {
      summary.loop_record = line;
      auto fields = RecordFields(line);
      summary.longest_turn_ms = Number(fields, "longest_ms");
      summary.longest_turn_cpu_ms = Number(fields, "longest_cpu_ms");
      summary.turns_over_1ms = Number(fields, "over_1ms");
      summary.turns_over_1ms_cpu = Number(fields, "over_1ms_cpu");
    } else if (IsRecord(line, "state database commits")) {
      summary.commit_record = line;
      auto fields = RecordFields(line);
      summary.commits = Number(fields, "commits");
      summary.writes = Number(fields, "writes");
      summary.calls = Number(fields, "calls");
      summary.longest_commit_ms = Number(fields, "longest_commit_ms");
      summary.failed_commits = Number(fields, "failed");
    } else if (line.find("kept the loop thread busy") != std::string::npos) {
      summary.loop_warnings.push_back(line);
    }
  }
  return summary;
}

}  // namespace oxide::bench
