// M CreateVolume calls outstanding at once; a sampler thread reads the plugin's RSS meanwhile.
#include "in_flight.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "support/bench_flags.h"
#include "support/volume_driver.h"
#include "volume_cell.h"

namespace oxide::bench {

using namespace oxide::testing;
using Clock = std::chrono::steady_clock;

void RunInFlight(BenchSession& session, int calls, int latency_ms) {
  // A fresh plugin process on the same state database, so VmHWM is this test's peak.
  auto plugin = session.StartPlugin();
  const long rss_idle = ProcessStatusKiB(plugin->pid(), "VmRSS");
  std::vector<VolumePlan> plans;
  for (int i = 0; i < calls; ++i)
    plans.push_back(
        {.name = "inflight-vol-" + std::to_string(i), .node_id = "", .last = VolumeStep::kCreate});
  VolumeDriver driver(session.ConnectedChannel(), plans,
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
  std::printf("== in flight: M=%d CreateVolume calls at once, L=%d ms ==\n", calls, latency_ms);
  std::printf("completed: %s (%zu/%d) in %.1f s\n", done ? "all" : "NOT ALL", driver.done_count(),
              calls, wall);
  for (const std::string& error : DriverErrorLines(driver))
    std::printf("  errors: %s\n", error.c_str());
  std::printf("client: at most %zu calls in flight at once (sampled: %zu)\n",
              driver.max_in_flight(), peak_client);
  std::printf("plugin RSS: idle %.1f MiB, sampled peak %.1f MiB, VmHWM %.1f MiB\n", MiB(rss_idle),
              MiB(peak_rss), MiB(hwm));
  plugin->Signal(SIGTERM);
  plugin->WaitExit();
}

}  // namespace oxide::bench
