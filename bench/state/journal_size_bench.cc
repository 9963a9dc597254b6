// Journal-size benchmark (issue 22, bounded state): L create+delete lifecycles through the real
// plugin (controller mode) against oxide-sim, C at a time, with V volumes kept alive throughout;
// then the size of state.db + state.db-wal, next to the size for the same V live volumes made
// fresh by a second plugin. Prints the machine-speed reference, the lifecycles per second, the
// journal's rows, and the sizes while the plugins run and after each exits cleanly.
// Flags: --lifecycles L (100000) --live V (20) --concurrency C (64) --prune 1|0 (1; 0 starts the
// plugin with the hidden --journal-prune=off: every finished entry kept, as before issue 22).
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../controller/machine_speed.h"
#include "support/bench_flags.h"
#include "support/controller_rig.h"
#include "support/volume_driver.h"

namespace oxide::bench {
namespace {

using namespace oxide::testing;

struct Flags {
  int lifecycles = 100000;
  int live = 20;
  int concurrency = 64;
  int prune = 1;
};

Flags Parse(int argc, char** argv) {
  Flags flags;
  ParseIntFlags(argc, argv,
                {{"--lifecycles", &flags.lifecycles},
                 {"--live", &flags.live},
                 {"--concurrency", &flags.concurrency},
                 {"--prune", &flags.prune}},
                "journal_size_bench [--lifecycles L] [--live V] [--concurrency C] [--prune 1|0]");
  if (flags.lifecycles < 0 || flags.live < 0 || flags.concurrency < 1) {
    std::fprintf(stderr, "--lifecycles and --live must be >= 0, --concurrency >= 1\n");
    std::exit(2);
  }
  return flags;
}

long long FileBytes(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? static_cast<long long>(info.st_size) : 0;
}

struct Sizes {
  long long db = 0;
  long long wal = 0;
  long long total() const { return db + wal; }
};

Sizes SizesOf(const std::string& db_path) {
  return {FileBytes(db_path), FileBytes(db_path + "-wal")};
}

std::string Rows(const std::string& db_path, const std::string& sql) {
  std::string error;
  auto rows = SqliteQuery(db_path, sql, &error);
  if (!error.empty() || rows.empty() || rows[0].empty()) return "? (" + error + ")";
  return rows[0][0];
}

// A plugin against its own simulator, with `live` volumes created and left alive.
struct Run {
  ControllerRig rig{"bench", {}};
  std::unique_ptr<PluginProcess> plugin;
  std::shared_ptr<grpc::Channel> channel;

  bool Start(bool prune) {
    if (!rig.sim().running()) return false;
    if (!prune) rig.plugin().args.push_back("--journal-prune=off");
    plugin = rig.LaunchPlugin();
    if (!plugin->WaitServing(rig.plugin().socket_path())) {
      std::fprintf(stderr, "the plugin did not start; its log:\n%s\n", plugin->Log().c_str());
      return false;
    }
    channel = ReconnectingUnixChannel(rig.plugin().socket_path());
    return channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10));
  }

  // Drives `plans` to their end; false (with the first errors printed) if some did not finish.
  bool Drive(std::vector<VolumePlan> plans, int concurrency, double* seconds) {
    DriverOptions options;
    options.concurrency = static_cast<size_t>(concurrency);
    options.deadline = std::chrono::seconds(10);
    const size_t count = plans.size();
    VolumeDriver driver(channel, std::move(plans), options);
    const auto started = std::chrono::steady_clock::now();
    const bool done = driver.Run(std::chrono::minutes(30));
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!done || driver.done_count() != count) {
      std::fprintf(stderr, "only %zu of %zu plans finished\n", driver.done_count(), count);
      int shown = 0;
      for (const VolumeResult& result : driver.results()) {
        if (!result.last_error.empty() && shown++ < 5)
          std::fprintf(stderr, "  %s\n", result.last_error.c_str());
      }
      return false;
    }
    return true;
  }

  bool CreateLive(int live) {
    std::vector<VolumePlan> plans;
    for (int i = 0; i < live; ++i)
      plans.push_back({.name = "live-" + std::to_string(i),
                       .node_id = "",
                       .last = VolumeStep::kCreate,
                       .publish = true});
    double seconds = 0;
    return Drive(std::move(plans), 16, &seconds);
  }

  // SIGTERM; true when it exited with 0.
  bool Stop() {
    plugin->Signal(SIGTERM);
    return plugin->WaitExit(std::chrono::seconds(60)) == 0;
  }
};

void PrintSizes(const char* what, const Sizes& sizes) {
  std::printf("%-44s state.db %9lld B + wal %9lld B = %9lld B (%.2f MiB)\n", what, sizes.db,
              sizes.wal, sizes.total(), static_cast<double>(sizes.total()) / (1 << 20));
}

int Main(const Flags& flags) {
  std::printf("machine speed reference: %.1f ms (sorting 1 Mi values; lower is faster)\n",
              ReferenceWorkMs());
  std::printf("%d create+delete lifecycles, %d at a time, %d live volumes, pruning %s\n",
              flags.lifecycles, flags.concurrency, flags.live, flags.prune ? "on" : "OFF");

  Run churn;
  if (!churn.Start(flags.prune != 0) || !churn.CreateLive(flags.live)) return 1;
  std::vector<VolumePlan> plans;
  plans.reserve(static_cast<size_t>(flags.lifecycles));
  for (int i = 0; i < flags.lifecycles; ++i)
    plans.push_back({.name = "churn-" + std::to_string(i),
                     .node_id = "",
                     .last = VolumeStep::kDelete,
                     .publish = false});
  double seconds = 0;
  if (!churn.Drive(std::move(plans), flags.concurrency, &seconds)) return 1;
  std::printf("lifecycles: %d in %.1f s = %.0f lifecycles/s (%.0f RPCs/s)\n", flags.lifecycles,
              seconds, flags.lifecycles / seconds, 2 * flags.lifecycles / seconds);
  const std::string churn_db = churn.rig.plugin().state_db();
  const Sizes churn_running = SizesOf(churn_db);

  Run fresh;
  if (!fresh.Start(true) || !fresh.CreateLive(flags.live)) return 1;
  const std::string fresh_db = fresh.rig.plugin().state_db();
  const Sizes fresh_running = SizesOf(fresh_db);

  PrintSizes("after the lifecycles, plugin running:", churn_running);
  PrintSizes("live volumes only (fresh), plugin running:", fresh_running);
  const bool churn_stopped = churn.Stop();
  const bool fresh_stopped = fresh.Stop();
  const Sizes churn_exited = SizesOf(churn_db);
  const Sizes fresh_exited = SizesOf(fresh_db);
  PrintSizes("after the lifecycles, plugin exited:", churn_exited);
  PrintSizes("live volumes only (fresh), plugin exited:", fresh_exited);
  std::printf("journal rows after the lifecycles: %s (%s finished), volumes rows: %s\n",
              Rows(churn_db, "SELECT count(*) FROM operations").c_str(),
              Rows(churn_db, "SELECT count(*) FROM operations WHERE state != 'pending'").c_str(),
              Rows(churn_db, "SELECT count(*) FROM volumes").c_str());
  const long long above = churn_running.total() - fresh_running.total();
  std::printf("above the live-only size while running: %.2f MiB (target <= 2 MiB): %s\n",
              static_cast<double>(above) / (1 << 20), above <= (2 << 20) ? "met" : "NOT met");
  std::printf("above the live-only size after exit:    %.2f MiB\n",
              static_cast<double>(churn_exited.total() - fresh_exited.total()) / (1 << 20));
  return churn_stopped && fresh_stopped ? 0 : 1;
}

}  // namespace
}  // namespace oxide::bench

int main(int argc, char** argv) {
  return oxide::bench::Main(oxide::bench::Parse(argc, argv));
}
