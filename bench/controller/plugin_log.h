// Reading the plugin's log (text format, one record per line): the lines one process appended,
// the key=value fields of a record, and the summaries the plugin logs when it exits.
// Main thread only.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace oxide::bench {

// The lines appended to a log file after `offset`, read a piece at a time.
class LogTail {
 public:
  LogTail(std::string path, size_t offset) : path_(std::move(path)), offset_(offset) {}
  // Whole lines appended since the last call (a line still being written waits for the next).
  std::vector<std::string> NewLines();
  // Everything appended after the starting offset, whole lines or not.
  static std::string Since(const std::string& path, size_t offset);

 private:
  std::string path_;
  size_t offset_;
  std::string partial_;
};

// The fields of a text record: key=value pairs, a "quoted value" unquoted.
std::map<std::string, std::string> RecordFields(const std::string& line);
// True when the line's msg field is `message`.
bool IsRecord(const std::string& line, const std::string& message);

// What a plugin process logged at exit.
struct ExitSummary {
  std::string loop_record;                    // the "event loop turns" record; "" when absent
  std::optional<double> longest_turn_ms;      // its longest_ms (wall time, the loop thread busy)
  std::optional<double> longest_turn_cpu_ms;  // its longest_cpu_ms (the loop thread's CPU time)
  std::optional<double> turns_over_1ms, turns_over_1ms_cpu;  // its over_1ms, over_1ms_cpu
  std::vector<std::string> loop_warnings;  // "... kept the loop thread busy" records
  // The "state database commits" record (absent from plugins that do not log it).
  std::string commit_record;
  std::optional<double> commits, writes, calls, longest_commit_ms, failed_commits;
};
ExitSummary ReadExitSummary(const std::string& log_text);

}  // namespace oxide::bench
