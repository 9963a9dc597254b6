// The restart figure: volumes made through the plugin, its journal rewritten to what a crash
// leaves (unfinished_journal.cc), then a fresh plugin process timed from its spawn.
#include "restart_figure.h"

#include <grpcpp/client_context.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <thread>

#include "child_process.h"
#include "csi.grpc.pb.h"
#include "plugin_log.h"
#include "support/bench_flags.h"
#include "support/volume_driver.h"
#include "text_table.h"
#include "unfinished_journal.h"
#include "volume_cell.h"

namespace oxide::bench {
namespace {

using namespace oxide::testing;
using Clock = std::chrono::steady_clock;

constexpr int kRestartLatencyMs = 5;
constexpr int kPrepareLatencyMs = 0;
constexpr int kPrepareConcurrency = 100;
constexpr auto kPoll = std::chrono::milliseconds(10);
constexpr auto kRestartLimit = std::chrono::minutes(10);

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Makes `names` through the plugin (CreateVolume only) and stops it; exits on failure.
void CreateThroughPlugin(BenchSession& session, const std::vector<std::string>& names) {
  std::vector<VolumePlan> plans;
  for (const std::string& name : names)
    plans.push_back({.name = name, .node_id = "", .last = VolumeStep::kCreate});
  auto plugin = session.StartPlugin();
  VolumeDriver driver(session.ConnectedChannel(), plans,
                      {.deadline = std::chrono::seconds(120),
                       .concurrency = static_cast<size_t>(kPrepareConcurrency)});
  const auto started = Clock::now();
  const bool done = driver.Run(std::chrono::minutes(20));
  const double wall = Seconds(Clock::now() - started);
  plugin->Signal(SIGTERM);
  const int exit_code = plugin->WaitExit();
  std::printf(
      "prepared: %zu/%zu volumes created through the plugin in %.2f s (C=%d, L=%d ms); "
      "plugin stopped with SIGTERM (exit code %d)\n",
      driver.done_count(), names.size(), wall, kPrepareConcurrency, kPrepareLatencyMs, exit_code);
  for (const std::string& error : DriverErrorLines(driver))
    std::printf("  errors: %s\n", error.c_str());
  if (!done) {
    std::fprintf(stderr, "the restart figure needs every volume made; giving up\n");
    std::exit(1);
  }
}

// Probes the plugin through its socket until it answers ready; the time is taken from `spawned`.
class Prober {
 public:
  Prober(std::string socket_path, Clock::time_point spawned)
      : socket_path_(std::move(socket_path)), spawned_(spawned), thread_([this] { Run(); }) {}
  ~Prober() { Stop(); }
  // Ends the probing (at once, or after the call in progress) and waits for the thread.
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool done() const { return done_; }
  // After Stop(): when the socket first accepted a connection and the first Probe said ready.
  std::optional<Clock::duration> socket_after() const { return socket_after_; }
  std::optional<Clock::duration> ready_after() const { return ready_after_; }
  int not_ready_answers() const { return not_ready_; }
  std::string last_error() const { return last_error_; }

 private:
  void Run() {
    while (!stop_ && !UnixSocketAccepts(socket_path_))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (stop_) return;
    socket_after_ = Clock::now() - spawned_;
    auto stub = csi::v1::Identity::NewStub(UnixChannel(socket_path_));
    while (!stop_) {
      grpc::ClientContext context;
      context.set_wait_for_ready(true);
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      csi::v1::ProbeResponse response;
      grpc::Status status = stub->Probe(&context, csi::v1::ProbeRequest(), &response);
      if (status.ok() && (!response.has_ready() || response.ready().value())) {
        ready_after_ = Clock::now() - spawned_;
        done_ = true;
        return;
      }
      ++not_ready_;
      last_error_ = status.ok() ? "ready=false" : status.error_message();
      std::this_thread::sleep_for(kPoll);
    }
    done_ = true;
  }

  std::string socket_path_;
  Clock::time_point spawned_;
  std::optional<Clock::duration> socket_after_, ready_after_;
  std::atomic<int> not_ready_{0};
  std::string last_error_;
  std::atomic<bool> done_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

void RunRestartFigure(BenchSession& session, int entries) {
  const int made = entries / 2;
  const int never_made = entries - made;
  std::printf(
      "== restart: N=%d unfinished create entries (%d of disks Oxide made, %d of disks "
      "never made), L=%d ms ==\n",
      entries, made, never_made, kRestartLatencyMs);
  std::vector<std::string> made_names, lost_names;
  for (int i = 0; i < made; ++i)
    made_names.push_back("restart-vol-" + std::to_string(i));
  for (int i = 0; i < never_made; ++i)
    lost_names.push_back("restart-lost-" + std::to_string(i));

  session.ResetStateDb();
  session.SetLatency(kPrepareLatencyMs);
  CreateThroughPlugin(session, made_names);
  UnfinishedCreates counts;
  std::string error;
  if (!MakeCreatesUnfinished(session.rig().plugin().state_db(), lost_names, &counts, &error)) {
    std::fprintf(stderr, "cannot rewrite the state database: %s\n", error.c_str());
    std::exit(1);
  }
  std::printf(
      "journal rewritten: %d finished creates reopened (volumes back in CREATING), %d "
      "pending creates added for disks never made: %d entries pending\n",
      counts.reopened, counts.added, counts.pending);

  session.SetLatency(kRestartLatencyMs);
  session.TakeRequestLog();
  LogTail log(session.rig().plugin().log_path(), session.LogSize());
  const auto spawned = Clock::now();
  auto plugin = session.rig().LaunchPlugin();
  Prober prober(session.rig().plugin().socket_path(), spawned);
  std::map<std::string, int> outcomes;  // of the "reconciled an unfinished operation" records
  int reconciled = 0, with_error = 0;
  std::string announced = "none";  // the count of "reconciling unfinished operations with Oxide"
  std::optional<Clock::duration> all_reconciled;
  bool exited = false;
  while (Clock::now() - spawned < kRestartLimit) {
    for (const std::string& line : log.NewLines()) {
      if (IsRecord(line, "reconciled an unfinished operation")) {
        auto fields = RecordFields(line);
        ++reconciled;
        ++outcomes[fields["outcome"]];
        if (!fields["error"].empty()) ++with_error;
      } else if (IsRecord(line, "reconciling unfinished operations with Oxide")) {
        announced = RecordFields(line)["count"];
      }
    }
    if (!all_reconciled && reconciled >= entries) all_reconciled = Clock::now() - spawned;
    if (all_reconciled && prober.done()) break;
    if (!plugin->running()) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  const long hwm = ProcessStatusKiB(plugin->pid(), "VmHWM");
  const std::map<std::string, int> oxide = session.TakeRequestLog();
  plugin->Signal(SIGTERM);
  plugin->WaitExit();

  if (exited)
    std::printf("the plugin EXITED during the test; see %s\n",
                session.rig().plugin().log_path().c_str());
  prober.Stop();
  auto after = [](const std::optional<Clock::duration>& d) {
    return d ? Fixed(Seconds(*d) * 1000, 1) + " ms" : std::string("never");
  };
  std::printf("socket accepting connections: %s after spawn\n",
              after(prober.socket_after()).c_str());
  std::printf("first Probe answered OK (ready): %s after spawn (%d earlier Probes not ready%s%s)\n",
              after(prober.ready_after()).c_str(), prober.not_ready_answers(),
              prober.last_error().empty() ? "" : ", last: ", prober.last_error().c_str());
  std::printf(
      "all %d entries reconciled: %s after spawn (log polled every %lld ms; the plugin "
      "announced %s to reconcile)\n",
      entries, after(all_reconciled).c_str(), static_cast<long long>(kPoll.count()),
      announced.c_str());
  std::printf("reconciled records: %d;", reconciled);
  for (const auto& [outcome, count] : outcomes)
    std::printf(" outcome=%s x%d", outcome.c_str(), count);
  std::printf("; with an error: %d\n", with_error);
  const bool match = reconciled == entries && outcomes["done"] == made &&
                     outcomes["rolled_back"] == never_made && with_error == 0 &&
                     counts.pending == entries;
  std::printf("counts %s: expected %d records, done x%d (disk found), rolled_back x%d (no disk)\n",
              match ? "match" : "DO NOT MATCH", entries, made, never_made);
  std::printf("Oxide requests during the restart:");
  for (const auto& [operation, count] : oxide)
    std::printf(" %s=%d", operation.c_str(), count);
  std::printf("\nplugin peak RSS (VmHWM, whole process life): %.1f MiB\n", MiB(hwm));
}

}  // namespace oxide::bench
