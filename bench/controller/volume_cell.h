// One cell of the controller benchmark: N volumes through CreateVolume → ControllerPublishVolume →
// ControllerUnpublishVolume → DeleteVolume, C at a time, against the sim at latency L, through a
// fresh plugin process; its figures, and the single cell's report. Main thread only.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench_session.h"
#include "plugin_log.h"
#include "support/volume_driver.h"

namespace oxide::bench {

inline constexpr int kConnectionCap = 32;  // the plugin's Oxide client: max_host_connections

struct CellSpec {
  int volumes = 0;
  int concurrency = 1;
  int latency_ms = 0;  // what the sim is set to (the caller sets it); used for the ideal time
  std::string name_prefix = "bench-vol-";
};

struct CellResult {
  CellSpec spec;
  bool all_done = false;
  size_t done_volumes = 0;
  uint64_t rpcs = 0;  // answered OK
  uint64_t attempts = 0;
  std::vector<std::string> errors;   // one line per step and gRPC code
  std::map<std::string, int> oxide;  // Oxide requests by operationId
  int oxide_requests = 0;
  double requests_per_volume = 0;  // R
  double wall_s = 0;
  double connection_bound_s = 0;  // N*R*L / min(C, cap)
  double chain_bound_s = 0;       // N*(R*L) / C
  double ideal_s = 0;             // the larger bound
  std::array<double, testing::kVolumeSteps> p50_ms{}, p99_ms{};
  std::array<size_t, testing::kVolumeSteps> calls{};
  double cpu_s = 0, user_s = 0, system_s = 0;  // of the plugin over the run
  long minor_faults = 0, voluntary_switches = 0, involuntary_switches = 0;
  long hwm_kib = -1;  // the plugin's VmHWM at the end of the run
  ExitSummary exit;   // what the plugin logged at exit
  double CpuUsPerRpc() const { return rpcs > 0 ? cpu_s * 1e6 / static_cast<double>(rpcs) : 0; }
};

// Starts a plugin process (on the session's state database as it is), runs the cell, stops the
// plugin (SIGTERM) and reads what it logged at exit.
CellResult RunVolumeCell(BenchSession& session, const CellSpec& spec);

// "<step> <gRPC code> x<count>, e.g. "<first message>"" for every kind of error the driver saw.
std::vector<std::string> DriverErrorLines(const testing::VolumeDriver& driver);

// The single cell's report (docs/performance.md "Controller").
void PrintCellReport(const CellResult& result);

}  // namespace oxide::bench
