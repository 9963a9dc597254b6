// The real oxide-sim and the real plugin in controller mode against it (crash test, controller
// benchmark), plus SQLite and /proc readers. Main (test or bench) thread only.
#pragma once

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim_process.h"
#include "support/plugin_process.h"
#include "support/plugin_setup.h"

namespace oxide::testing {

class ControllerRig {
 public:
  // Starts oxide-sim with `sim_args` plus `--project <project>`.
  ControllerRig(const std::string& project, std::vector<std::string> sim_args);

  sim_test::SimProcess& sim() { return sim_; }
  // Flags and environment of the plugin (--mode=controller against the sim); may be adjusted.
  PluginSetup& plugin() { return plugin_; }
  const std::string& project() const { return project_; }

  // Starts the plugin (log appended to plugin().log_path()) without waiting for it.
  std::unique_ptr<PluginProcess> LaunchPlugin() const;
  // Creates `count` stopped instances named <prefix>-<i>; returns their ids (empty on error).
  std::vector<std::string> CreateStoppedInstances(int count, const std::string& prefix);
  // Every disk of the project (all pages), or an error message in `error`.
  std::vector<nlohmann::json> ListDisks(std::string* error);
  // Sends a /__sim control request; returns the HTTP status and fills `body`.
  long Control(const std::string& method, const std::string& path, const nlohmann::json& request,
               nlohmann::json* body);

 private:
  std::string project_;
  sim_test::SimProcess sim_;
  PluginSetup plugin_;
};

// Runs `sql` on an SQLite file opened read-only (the plugin may be writing it); every column of
// every row as text ("NULL" for NULL). On error, `error` is set.
std::vector<std::vector<std::string>> SqliteQuery(const std::string& db_path,
                                                  const std::string& sql, std::string* error);
// CPU time a process has used so far (seconds, user and system) and the minor page faults it
// took; all -1 when unreadable.
struct CpuUsage {
  double user_seconds = -1;
  double system_seconds = -1;
  long minor_faults = -1;
  double total_seconds() const { return user_seconds + system_seconds; }
};
CpuUsage ProcessCpuUsage(pid_t pid);
// A "Vm..." figure of /proc/<pid>/status (e.g. "VmHWM") in KiB; -1 when unreadable.
long ProcessStatusKiB(pid_t pid, const std::string& field);

// Context switches of a process's live threads so far: voluntary ones (it waited) and
// involuntary ones (it was preempted, e.g. by a process its send woke on the same CPU).
struct ContextSwitches {
  long voluntary = 0;
  long involuntary = 0;
};
ContextSwitches ProcessContextSwitches(pid_t pid);

}  // namespace oxide::testing
