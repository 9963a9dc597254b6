#include "metrics/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "metrics/registry.h"

namespace oxide::metrics {
namespace {

struct ProcStat {
  double cpu_seconds = 0;
  double start_seconds_since_boot = 0;
  double resident_bytes = 0;
  bool ok = false;
};

// /proc/self/stat: the fields after the command name (which may hold spaces and parentheses).
ProcStat ReadProcStat() {
  ProcStat stat;
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return stat;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return stat;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  // Field 3 (state) is the first after ')'; utime = 14, stime = 15, starttime = 22, rss = 24.
  double utime = 0, stime = 0, start = 0, rss_pages = 0;
  for (int number = 3; fields >> field; ++number) {
    if (number == 14) utime = std::strtod(field.c_str(), nullptr);
    if (number == 15) stime = std::strtod(field.c_str(), nullptr);
    if (number == 22) start = std::strtod(field.c_str(), nullptr);
    if (number == 24) {
      rss_pages = std::strtod(field.c_str(), nullptr);
      stat.ok = true;
      break;
    }
  }
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  stat.cpu_seconds = (utime + stime) / ticks;
  stat.start_seconds_since_boot = start / ticks;
  stat.resident_bytes = rss_pages * static_cast<double>(sysconf(_SC_PAGESIZE));
  return stat;
}

// Boot time in seconds since the epoch (/proc/stat's btime).
double BootTime() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) return value;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

double OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  double count = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the directory's own descriptor
}

void Append(std::string* out, const char* name, const char* type, const char* help, double value) {
  *out += std::string("# HELP ") + name + ' ' + help + "\n# TYPE " + name + ' ' + type + '\n' +
          name + ' ' + FormatValue(value) + '\n';
}

}  // namespace

void AppendProcessMetrics(std::string* out) {
  const ProcStat stat = ReadProcStat();
  if (!stat.ok) return;
  static const double boot_time = BootTime();
  Append(out, "process_cpu_seconds_total", "counter",
         "Total user and system CPU time spent in seconds.", stat.cpu_seconds);
  Append(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
         stat.resident_bytes);
  Append(out, "process_open_fds", "gauge", "Number of open file descriptors.", OpenFds());
  Append(out, "process_start_time_seconds", "gauge",
         "Start time of the process since unix epoch in seconds.",
         boot_time + stat.start_seconds_since_boot);
}

}  // namespace oxide::metrics
