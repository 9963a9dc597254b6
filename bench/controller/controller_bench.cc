// Controller benchmark (README "Controller (issue 4)"): N volumes at concurrency C against
// oxide-sim with latency L, then M CreateVolume calls at once. Flags: see Parse().
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/bench_flags.h"
#include "support/controller_rig.h"
#include "support/volume_driver.h"

namespace oxide::bench {
namespace {

using namespace oxide::testing;
using Clock = std::chrono::steady_clock;

constexpr int kConnectionCap = 32;  // the plugin's Oxide client: max_host_connections

struct Flags {
  int volumes = 2000;
  int concurrency = 100;
  int latency_ms = 50;
  int in_flight = 10000;
};

Flags Parse(int argc, char** argv) {
  Flags flags;
  ParseIntFlags(argc, argv,
                {{"--volumes", &flags.volumes},
                 {"--concurrency", &flags.concurrency},
                 {"--latency-ms", &flags.latency_ms},
                 {"--in-flight-test", &flags.in_flight}},
                "controller_bench [--volumes N] [--concurrency C] [--latency-ms L] "
                "[--in-flight-test M]");
  if (flags.concurrency < 1 || flags.latency_ms < 0 || flags.volumes < 0 || flags.in_flight < 0) {
    std::fprintf(stderr, "--concurrency must be at least 1; the others may not be negative\n");
    std::exit(2);
  }
  return flags;
}

// CPU time of a fixed piece of work (sorting 1 Mi pseudo-random 32-bit values, 4 MiB: compute,
// caches and branches), median of 5: the same binary's figures on this shared VM vary by up to
// 1.5x from day to day, and this says how fast the machine was during the run.
double ReferenceWorkMs() {
  std::vector<double> runs;
  for (int run = 0; run < 5; ++run) {
    std::vector<uint32_t> values(1 << 20);
    uint32_t x = 2463534242u;
    for (uint32_t& v : values) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      v = x;
    }
    timespec start{}, end{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    std::sort(values.begin(), values.end());
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
    if (values.front() > values.back()) std::abort();  // keeps the sort
    runs.push_back(static_cast<double>(end.tv_sec - start.tv_sec) * 1e3 +
                   static_cast<double>(end.tv_nsec - start.tv_nsec) / 1e6);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

// Oxide requests in the sim's request log, by operationId; clears the log.
std::map<std::string, int> TakeRequestLog(ControllerRig& rig) {
  nlohmann::json log;
  rig.Control("GET", "/__sim/requests", nullptr, &log);
  rig.Control("DELETE", "/__sim/requests", nullptr, nullptr);
  std::map<std::string, int> counts;
  if (!log.is_object()) return counts;
  for (const nlohmann::json& request : log["requests"])
    ++counts[request.value("operation", "?")];
  return counts;
}

std::unique_ptr<PluginProcess> StartPlugin(ControllerRig& rig) {
  auto plugin = rig.LaunchPlugin();
  if (!plugin->WaitServing(rig.plugin().socket_path())) {
    std::fprintf(stderr, "the plugin did not start; its log:\n%s\n", plugin->Log().c_str());
    std::exit(1);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // start-up credentials check
  return plugin;
}

// A channel that is connected already, so the first calls do not wait for the connection.
std::shared_ptr<grpc::Channel> ConnectedChannel(ControllerRig& rig) {
  auto channel = ReconnectingUnixChannel(rig.plugin().socket_path());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "cannot connect to the plugin\n");
    std::exit(1);
  }
  return channel;
}

void PrintErrors(const VolumeDriver& driver) {
  for (int step = 0; step < kVolumeSteps; ++step) {
    const StepStats& stats = driver.stats(static_cast<VolumeStep>(step));
    for (const auto& [code, count] : stats.errors) {
      std::printf("  errors: %s %s x%llu, e.g. \"%s\"\n",
                  VolumeStepName(static_cast<VolumeStep>(step)), code.c_str(),
                  static_cast<unsigned long long>(count), stats.examples.at(code).c_str());
    }
  }
}

// The plugin's own record of how long its loop turns kept the loop thread busy (logged at exit).
void PrintLoopTurns(PluginProcess& plugin) {
  std::istringstream log(plugin.Log());
  std::string record;
  for (std::string line; std::getline(log, line);) {
    if (line.find("event loop turns") != std::string::npos) record = line;
    if (line.find("kept the loop thread busy") != std::string::npos) {
      std::printf("plugin warned: %s\n", line.c_str());
    }
  }
  std::printf("plugin loop turns (busy time per turn, whole process life): %s\n",
              record.empty() ? "no record in the plugin's log" : record.c_str());
}

void RunThroughput(ControllerRig& rig, const Flags& flags) {
  const int instances = std::max(1, flags.concurrency);
  std::vector<std::string> nodes = rig.CreateStoppedInstances(instances, "bench-node");
  if (nodes.empty()) {
    std::fprintf(stderr, "cannot create instances\n");
    std::exit(1);
  }
  std::vector<VolumePlan> plans;
  for (int i = 0; i < flags.volumes; ++i) {
    // Volume i goes to node i % C: at most ~1 volume per node is in progress at a time.
    plans.push_back({.name = "bench-vol-" + std::to_string(i),
                     .node_id = nodes[static_cast<size_t>(i % instances)],
                     .last = VolumeStep::kDelete});
  }
  auto plugin = StartPlugin(rig);
  TakeRequestLog(rig);
  VolumeDriver driver(ConnectedChannel(rig), plans,
                      {.deadline = std::chrono::seconds(120),
                       .concurrency = static_cast<size_t>(flags.concurrency)});
  const CpuUsage cpu_before = ProcessCpuUsage(plugin->pid());
  const ContextSwitches switches_before = ProcessContextSwitches(plugin->pid());
  const auto started = Clock::now();
  bool done = driver.Run(std::chrono::minutes(20));
  const double wall = std::chrono::duration<double>(Clock::now() - started).count();
  const CpuUsage cpu_after = ProcessCpuUsage(plugin->pid());
  const double cpu = cpu_after.total_seconds() - cpu_before.total_seconds();
  const ContextSwitches switches_after = ProcessContextSwitches(plugin->pid());
  const long hwm = ProcessStatusKiB(plugin->pid(), "VmHWM");
  std::map<std::string, int> oxide = TakeRequestLog(rig);

  uint64_t rpcs = 0, attempts = 0;
  for (int step = 0; step < kVolumeSteps; ++step) {
    rpcs += driver.stats(static_cast<VolumeStep>(step)).ok_latency_ms.size();
    attempts += driver.stats(static_cast<VolumeStep>(step)).attempts;
  }
  int requests = 0;
  for (const auto& [operation, count] : oxide)
    requests += count;
  const double per_volume = static_cast<double>(requests) / flags.volumes;
  const double latency_s = flags.latency_ms / 1000.0;
  const double connection_bound =
      flags.volumes * per_volume * latency_s / std::min(flags.concurrency, kConnectionCap);
  const double chain_bound = flags.volumes * (per_volume * latency_s) / flags.concurrency;
  const double ideal = std::max(connection_bound, chain_bound);

  std::printf("== throughput: N=%d volumes, C=%d, L=%d ms, connection cap %d ==\n", flags.volumes,
              flags.concurrency, flags.latency_ms, kConnectionCap);
  std::printf("completed: %s (%zu/%d volumes), %llu RPCs OK, %llu attempts\n",
              done ? "all" : "NOT ALL", driver.done_count(), flags.volumes,
              static_cast<unsigned long long>(rpcs), static_cast<unsigned long long>(attempts));
  PrintErrors(driver);
  std::printf("Oxide requests: %d (R = %.2f per volume):", requests, per_volume);
  for (const auto& [operation, count] : oxide)
    std::printf(" %s=%d", operation.c_str(), count);
  std::printf("\n");
  std::printf("ideal: connection bound N*R*L/min(C,cap) = %.2f s; chain bound N*(R*L)/C = %.2f s\n",
              connection_bound, chain_bound);
  std::printf("total wall time: %.2f s = %.3f x ideal (%.2f s)\n", wall, wall / ideal, ideal);
  std::printf("throughput: %.1f volumes/s, %.1f RPCs/s\n", flags.volumes / wall, rpcs / wall);
  for (int step = 0; step < kVolumeSteps; ++step) {
    std::vector<double> latencies = driver.stats(static_cast<VolumeStep>(step)).ok_latency_ms;
    double p50 = Quantile(latencies, 0.5);
    double p99 = Quantile(latencies, 0.99);
    std::printf("  %-26s p50 %8.1f ms   p99 %8.1f ms   (%zu calls)\n",
                VolumeStepName(static_cast<VolumeStep>(step)), p50, p99, latencies.size());
  }
  std::printf("plugin CPU: %.3f s over the run = %.1f us per RPC\n", cpu,
              rpcs > 0 ? cpu * 1e6 / static_cast<double>(rpcs) : 0.0);
  const double per_rpc = rpcs > 0 ? 1.0 / static_cast<double>(rpcs) : 0.0;
  std::printf("  of which user %.1f us, system %.1f us; minor page faults per RPC: %.2f\n",
              (cpu_after.user_seconds - cpu_before.user_seconds) * 1e6 * per_rpc,
              (cpu_after.system_seconds - cpu_before.system_seconds) * 1e6 * per_rpc,
              static_cast<double>(cpu_after.minor_faults - cpu_before.minor_faults) * per_rpc);
  std::printf(
      "plugin context switches per RPC: %.2f voluntary (waits), %.2f involuntary (preempted)\n",
      static_cast<double>(switches_after.voluntary - switches_before.voluntary) * per_rpc,
      static_cast<double>(switches_after.involuntary - switches_before.involuntary) * per_rpc);
  std::printf("plugin peak RSS (VmHWM): %.1f MiB\n", MiB(hwm));
  plugin->Signal(SIGTERM);
  plugin->WaitExit();
  PrintLoopTurns(*plugin);
}

void RunInFlight(ControllerRig& rig, const Flags& flags) {
  // A fresh plugin process on the same state database, so VmHWM is this test's peak.
  auto plugin = StartPlugin(rig);
  const long rss_idle = ProcessStatusKiB(plugin->pid(), "VmRSS");
  std::vector<VolumePlan> plans;
  for (int i = 0; i < flags.in_flight; ++i)
    plans.push_back(
        {.name = "inflight-vol-" + std::to_string(i), .node_id = "", .last = VolumeStep::kCreate});
  VolumeDriver driver(ConnectedChannel(rig), plans,
                      {.deadline = std::chrono::minutes(10), .concurrency = 0});
  // Samples, while the client runs: client-side calls in flight and the plugin's RSS (its
  // database cannot be read meanwhile: the plugin holds it locked).
  std::atomic<bool> stop{false};
  size_t peak_client = 0;
  long peak_rss = 0;
  std::thread sampler([&] {
    while (!stop) {
      size_t client = driver.in_flight();
      long rss = ProcessStatusKiB(plugin->pid(), "VmRSS");
      peak_client = std::max(peak_client, client);
      peak_rss = std::max(peak_rss, rss);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  const auto started = Clock::now();
  bool done = driver.Run(std::chrono::minutes(15));
  const double wall = std::chrono::duration<double>(Clock::now() - started).count();
  stop = true;
  sampler.join();
  const long hwm = ProcessStatusKiB(plugin->pid(), "VmHWM");
  std::printf("== in flight: M=%d CreateVolume calls at once, L=%d ms ==\n", flags.in_flight,
              flags.latency_ms);
  std::printf("completed: %s (%zu/%d) in %.1f s\n", done ? "all" : "NOT ALL", driver.done_count(),
              flags.in_flight, wall);
  PrintErrors(driver);
  std::printf("client: at most %zu calls in flight at once (sampled: %zu)\n",
              driver.max_in_flight(), peak_client);
  std::printf("plugin RSS: idle %.1f MiB, sampled peak %.1f MiB, VmHWM %.1f MiB\n", MiB(rss_idle),
              MiB(peak_rss), MiB(hwm));
  plugin->Signal(SIGTERM);
  plugin->WaitExit();
}

}  // namespace
}  // namespace oxide::bench

int main(int argc, char** argv) {
  using namespace oxide::bench;
  Flags flags = Parse(argc, argv);
  oxide::testing::ControllerRig rig(
      "bench", {"--fault", "*:latency_ms=" + std::to_string(flags.latency_ms)});
  if (!rig.sim().running()) return 1;
  // Extra plugin flags for A/B runs, e.g. OXIDE_BENCH_PLUGIN_ARGS="--commit-window-ms=0".
  if (const char* extra = std::getenv("OXIDE_BENCH_PLUGIN_ARGS")) {
    std::istringstream words(extra);
    for (std::string word; words >> word;)
      rig.plugin().args.push_back(word);
  }
  std::printf(
      "machine speed reference: sorting 1 Mi 32-bit values took %.1f ms of CPU (median of "
      "5; lower is faster)\n",
      ReferenceWorkMs());
  if (flags.volumes > 0) RunThroughput(rig, flags);
  if (flags.in_flight > 0) RunInFlight(rig, flags);
  return 0;
}
