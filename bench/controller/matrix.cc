// The C × L matrix: each cell's N (from a pilot run, so that a cell takes about the same time
// whatever the plugin's speed), the runs and the table.
#include "matrix.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "support/volume_driver.h"
#include "text_table.h"

namespace oxide::bench {
namespace {

constexpr int kCallers[] = {1, 16, 100};
constexpr int kLatenciesMs[] = {0, 5, 50};
constexpr int kPilotVolumesPerCaller = 3;
constexpr double kPilotMinSeconds = 0.5;
constexpr int kPilotGrowth = 4;
constexpr int kPilotMaxBatches = 5;
constexpr int kMaxVolumes = 200000;

std::string Prefix(int callers, int latency_ms, const std::string& what) {
  return "m-c" + std::to_string(callers) + "-l" + std::to_string(latency_ms) + "-" + what + "-";
}

// Volumes per second of the cell's work in a pilot: batches of 3 volumes per caller, 4 times
// more each time, in a plugin process and state database of its own, until a batch takes 0.5 s
// (the rate of a shorter one says little). 0 when a batch did not complete.
double PilotRate(BenchSession& session, int callers, int latency_ms, std::string* report) {
  using namespace oxide::testing;
  session.ResetStateDb();
  auto plugin = session.StartPlugin();
  auto channel = session.ConnectedChannel();
  std::vector<std::string> nodes = session.Nodes(callers);
  double rate = 0;
  int volumes = kPilotVolumesPerCaller * callers;
  for (int batch = 0; batch < kPilotMaxBatches; ++batch, volumes *= kPilotGrowth) {
    std::vector<VolumePlan> plans;
    for (int i = 0; i < volumes; ++i) {
      plans.push_back(
          {.name = Prefix(callers, latency_ms, "pilot" + std::to_string(batch)) + std::to_string(i),
           .node_id = nodes[static_cast<size_t>(i % callers)],
           .last = VolumeStep::kDelete});
    }
    VolumeDriver driver(
        channel, plans,
        {.deadline = std::chrono::seconds(120), .concurrency = static_cast<size_t>(callers)});
    const auto started = std::chrono::steady_clock::now();
    const bool done = driver.Run(std::chrono::minutes(5));
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    *report += (report->empty() ? "" : ", ") + std::to_string(volumes) + " volumes in " +
               Fixed(wall, 2) + " s";
    if (!done) {
      *report += " NOT ALL DONE";
      for (const std::string& error : DriverErrorLines(driver))
        *report += "; " + error;
      rate = 0;
      break;
    }
    rate = volumes / wall;
    if (wall >= kPilotMinSeconds) break;
  }
  plugin->Signal(SIGTERM);
  plugin->WaitExit();
  session.TakeRequestLog();
  return rate;
}

// N for a cell: --matrix-volumes, or what the pilot's rate gives in --matrix-seconds. The
// plugin's speed at L <= 5 ms differs by 10x and more between builds (the group commit), so a
// fixed N would not do.
int ChooseVolumes(BenchSession& session, const Options& options, int callers, int latency_ms) {
  if (options.matrix_volumes > 0) return options.matrix_volumes;
  std::string report;
  const double rate = PilotRate(session, callers, latency_ms, &report);
  // A failed pilot: a small cell, whose errors the table shows.
  const int volumes = rate > 0
                          ? std::clamp(static_cast<int>(std::lround(rate * options.matrix_seconds)),
                                       callers, kMaxVolumes)
                          : kPilotVolumesPerCaller * callers;
  std::printf("  pilot C=%d L=%d ms: %s (%.1f volumes/s) -> N=%d\n", callers, latency_ms,
              report.c_str(), rate, volumes);
  return volumes;
}

}  // namespace

std::vector<CellResult> RunMatrix(BenchSession& session, const Options& options) {
  std::vector<CellResult> cells;
  for (int callers : kCallers) {
    for (int latency_ms : kLatenciesMs) {
      session.SetLatency(latency_ms);
      const int volumes = ChooseVolumes(session, options, callers, latency_ms);
      session.ResetStateDb();
      CellSpec spec{.volumes = volumes,
                    .concurrency = callers,
                    .latency_ms = latency_ms,
                    .name_prefix = Prefix(callers, latency_ms, "vol")};
      cells.push_back(RunVolumeCell(session, spec));
      const CellResult& cell = cells.back();
      std::printf("matrix cell C=%d L=%d ms N=%d: %s in %.2f s, %llu RPCs OK\n", callers,
                  latency_ms, volumes, cell.all_done ? "all done" : "NOT ALL DONE", cell.wall_s,
                  static_cast<unsigned long long>(cell.rpcs));
      for (const std::string& error : cell.errors)
        std::printf("  errors: %s\n", error.c_str());
      std::fflush(stdout);
    }
  }
  return cells;
}

void PrintMatrixTable(const std::vector<CellResult>& cells) {
  TextTable table({"C", "L ms", "N", "wall s", "ideal s", "wall/ideal", "RPCs/s",
                   "Create p50/p99 ms", "Publish p50/p99 ms", "Unpublish p50/p99 ms",
                   "Delete p50/p99 ms", "CPU µs/RPC", "commits/s", "calls/commit", "writes/commit",
                   "longest turn ms wall/CPU", "turns > 1 ms wall/CPU"});
  for (const CellResult& cell : cells) {
    const ExitSummary& exit = cell.exit;
    const bool commits = exit.commits && *exit.commits > 0;
    std::string n = std::to_string(cell.spec.volumes);
    if (!cell.all_done) n = std::to_string(cell.done_volumes) + " of " + n + " done";
    std::vector<std::string> row = {
        std::to_string(cell.spec.concurrency),
        std::to_string(cell.spec.latency_ms),
        n,
        Fixed(cell.wall_s, 2),
        cell.ideal_s > 0 ? Fixed(cell.ideal_s, 2) : kNoValue,
        cell.ideal_s > 0 ? Fixed(cell.wall_s / cell.ideal_s, 2) + "×" : kNoValue,
        Fixed(static_cast<double>(cell.rpcs) / cell.wall_s, 0)};
    for (size_t step = 0; step < cell.p50_ms.size(); ++step)
      row.push_back(MsPair(cell.p50_ms[step], cell.p99_ms[step]));
    row.push_back(Fixed(cell.CpuUsPerRpc(), 0));
    row.push_back(exit.commits ? Fixed(*exit.commits / cell.wall_s, 0) : kNotLogged);
    row.push_back(commits && exit.calls ? Fixed(*exit.calls / *exit.commits, 2) : kNotLogged);
    row.push_back(commits && exit.writes ? Fixed(*exit.writes / *exit.commits, 2) : kNotLogged);
    row.push_back(FixedOr(exit.longest_turn_ms, 2) + "/" + FixedOr(exit.longest_turn_cpu_ms, 2));
    row.push_back(FixedOr(exit.turns_over_1ms, 0) + "/" + FixedOr(exit.turns_over_1ms_cpu, 0));
    table.Add(std::move(row));
  }
  std::printf(
      "== matrix: N volumes through Create → Publish → Unpublish → Delete, C callers, "
      "Oxide latency L; a fresh plugin process and state database per cell ==\n");
  table.Print(stdout);
  std::printf(
      "(ideal: the larger of N*R*L/min(C,%d) and N*(R*L)/C, R = Oxide requests per volume; CPU: "
      "the plugin's utime+stime over the run per RPC answered OK; commits: from the plugin's "
      "\"state database commits\" record at exit, over the cell's wall time; turns: the plugin's "
      "\"event loop turns\" record, whole process life; wall = the loop thread busy, including "
      "time the kernel gave other threads; CPU = the loop thread's own CPU time in the turn)\n",
      kConnectionCap);
}

}  // namespace oxide::bench
