// A cell of the controller benchmark: VolumeDriver through the real plugin, timed against the
// ideal bounds, with the plugin's CPU, context switches and RSS from /proc.
#include "volume_cell.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "support/bench_flags.h"

namespace oxide::bench {
using namespace oxide::testing;
using Clock = std::chrono::steady_clock;

std::vector<std::string> DriverErrorLines(const VolumeDriver& driver) {
  std::vector<std::string> lines;
  for (int step = 0; step < kVolumeSteps; ++step) {
    const StepStats& stats = driver.stats(static_cast<VolumeStep>(step));
    for (const auto& [code, count] : stats.errors) {
      lines.push_back(std::string(VolumeStepName(static_cast<VolumeStep>(step))) + " " + code +
                      " x" + std::to_string(count) + ", e.g. \"" + stats.examples.at(code) + "\"");
    }
  }
  return lines;
}

CellResult RunVolumeCell(BenchSession& session, const CellSpec& spec) {
  CellResult result;
  result.spec = spec;
  const int instances = std::max(1, spec.concurrency);
  std::vector<std::string> nodes = session.Nodes(instances);
  std::vector<VolumePlan> plans;
  for (int i = 0; i < spec.volumes; ++i) {
    // Volume i goes to node i % C: at most ~1 volume per node is in progress at a time.
    plans.push_back({.name = spec.name_prefix + std::to_string(i),
                     .node_id = nodes[static_cast<size_t>(i % instances)],
                     .last = VolumeStep::kDelete});
  }
  const size_t log_offset = session.LogSize();
  auto plugin = session.StartPlugin();
  session.TakeRequestLog();
  VolumeDriver driver(session.ConnectedChannel(), plans,
                      {.deadline = std::chrono::seconds(120),
                       .concurrency = static_cast<size_t>(spec.concurrency)});
  const CpuUsage cpu_before = ProcessCpuUsage(plugin->pid());
  const ContextSwitches switches_before = ProcessContextSwitches(plugin->pid());
  const auto started = Clock::now();
  result.all_done = driver.Run(std::chrono::minutes(20));
  result.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
  const CpuUsage cpu_after = ProcessCpuUsage(plugin->pid());
  const ContextSwitches switches_after = ProcessContextSwitches(plugin->pid());
  result.hwm_kib = ProcessStatusKiB(plugin->pid(), "VmHWM");
  result.oxide = session.TakeRequestLog();
  plugin->Signal(SIGTERM);
  plugin->WaitExit();
  result.exit = ReadExitSummary(LogTail::Since(session.rig().plugin().log_path(), log_offset));

  result.done_volumes = driver.done_count();
  result.errors = DriverErrorLines(driver);
  for (int step = 0; step < kVolumeSteps; ++step) {
    const StepStats& stats = driver.stats(static_cast<VolumeStep>(step));
    std::vector<double> latencies = stats.ok_latency_ms;
    result.rpcs += latencies.size();
    result.attempts += stats.attempts;
    result.calls[static_cast<size_t>(step)] = latencies.size();
    result.p50_ms[static_cast<size_t>(step)] = Quantile(latencies, 0.5);
    result.p99_ms[static_cast<size_t>(step)] = Quantile(latencies, 0.99);
  }
  for (const auto& [operation, count] : result.oxide)
    result.oxide_requests += count;
  result.requests_per_volume =
      spec.volumes > 0 ? static_cast<double>(result.oxide_requests) / spec.volumes : 0;
  const double latency_s = spec.latency_ms / 1000.0;
  result.connection_bound_s = spec.volumes * result.requests_per_volume * latency_s /
                              std::min(spec.concurrency, kConnectionCap);
  result.chain_bound_s = spec.volumes * (result.requests_per_volume * latency_s) / spec.concurrency;
  result.ideal_s = std::max(result.connection_bound_s, result.chain_bound_s);
  result.cpu_s = cpu_after.total_seconds() - cpu_before.total_seconds();
  result.user_s = cpu_after.user_seconds - cpu_before.user_seconds;
  result.system_s = cpu_after.system_seconds - cpu_before.system_seconds;
  result.minor_faults = cpu_after.minor_faults - cpu_before.minor_faults;
  result.voluntary_switches = switches_after.voluntary - switches_before.voluntary;
  result.involuntary_switches = switches_after.involuntary - switches_before.involuntary;
  return result;
}

void PrintCellReport(const CellResult& r) {
  const CellSpec& spec = r.spec;
  std::printf("== throughput: N=%d volumes, C=%d, L=%d ms, connection cap %d ==\n", spec.volumes,
              spec.concurrency, spec.latency_ms, kConnectionCap);
  std::printf("completed: %s (%zu/%d volumes), %llu RPCs OK, %llu attempts\n",
              r.all_done ? "all" : "NOT ALL", r.done_volumes, spec.volumes,
              static_cast<unsigned long long>(r.rpcs), static_cast<unsigned long long>(r.attempts));
  for (const std::string& error : r.errors)
    std::printf("  errors: %s\n", error.c_str());
  std::printf("Oxide requests: %d (R = %.2f per volume):", r.oxide_requests, r.requests_per_volume);
  for (const auto& [operation, count] : r.oxide)
    std::printf(" %s=%d", operation.c_str(), count);
  std::printf("\n");
  std::printf("ideal: connection bound N*R*L/min(C,cap) = %.2f s; chain bound N*(R*L)/C = %.2f s\n",
              r.connection_bound_s, r.chain_bound_s);
  std::printf("total wall time: %.2f s = %.3f x ideal (%.2f s)\n", r.wall_s, r.wall_s / r.ideal_s,
              r.ideal_s);
  std::printf("throughput: %.1f volumes/s, %.1f RPCs/s\n", spec.volumes / r.wall_s,
              static_cast<double>(r.rpcs) / r.wall_s);
  for (int step = 0; step < testing::kVolumeSteps; ++step) {
    const size_t s = static_cast<size_t>(step);
    std::printf("  %-26s p50 %8.1f ms   p99 %8.1f ms   (%zu calls)\n",
                testing::VolumeStepName(static_cast<testing::VolumeStep>(step)), r.p50_ms[s],
                r.p99_ms[s], r.calls[s]);
  }
  std::printf("plugin CPU: %.3f s over the run = %.1f us per RPC\n", r.cpu_s, r.CpuUsPerRpc());
  const double per_rpc = r.rpcs > 0 ? 1.0 / static_cast<double>(r.rpcs) : 0.0;
  std::printf("  of which user %.1f us, system %.1f us; minor page faults per RPC: %.2f\n",
              r.user_s * 1e6 * per_rpc, r.system_s * 1e6 * per_rpc,
              static_cast<double>(r.minor_faults) * per_rpc);
  std::printf(
      "plugin context switches per RPC: %.2f voluntary (waits), %.2f involuntary (preempted)\n",
      static_cast<double>(r.voluntary_switches) * per_rpc,
      static_cast<double>(r.involuntary_switches) * per_rpc);
  std::printf("plugin peak RSS (VmHWM): %.1f MiB\n", testing::MiB(r.hwm_kib));
  for (const std::string& warning : r.exit.loop_warnings)
    std::printf("plugin warned: %s\n", warning.c_str());
  std::printf(
      "plugin loop turns (busy time per turn, whole process life): %s\n",
      r.exit.loop_record.empty() ? "no record in the plugin's log" : r.exit.loop_record.c_str());
  if (r.exit.commit_record.empty()) {
    std::printf("plugin state database commits: no record in the plugin's log\n");
  } else if (r.exit.commits && r.exit.writes && r.exit.calls && *r.exit.commits > 0) {
    std::printf(
        "plugin state database commits: %.0f (%.1f per second of the run), %.2f calls and %.2f "
        "writes per commit; whole record: %s\n",
        *r.exit.commits, *r.exit.commits / r.wall_s, *r.exit.calls / *r.exit.commits,
        *r.exit.writes / *r.exit.commits, r.exit.commit_record.c_str());
  } else {
    std::printf("plugin state database commits: %s\n", r.exit.commit_record.c_str());
  }
}

}  // namespace oxide::bench
