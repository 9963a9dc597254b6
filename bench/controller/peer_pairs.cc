// The peer comparison: each server a fresh process, the same PairOptions, /proc for its CPU and
// RSS; the hostpath driver from ../shared/tools (README there), skipped with a line when absent.
#include "peer_pairs.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "child_process.h"
#include "pair_client.h"
#include "support/bench_flags.h"
#include "support/temp_dir.h"
#include "support/volume_driver.h"
#include "text_table.h"

namespace oxide::bench {
namespace {

using namespace oxide::testing;

// The reference driver, as the project's other scripts find it: ../shared/tools next to the
// repository. OXIDE_BENCH_HOSTPATHPLUGIN names another binary.
std::string HostpathBinary() {
  if (const char* path = std::getenv("OXIDE_BENCH_HOSTPATHPLUGIN"); path != nullptr && *path)
    return path;
  return std::string(OXIDE_SOURCE_DIR) + "/../shared/tools/hostpathplugin";
}

struct ServerRun {
  std::string server;
  PairResult pairs{};
  double cpu_s = 0;
  long hwm_kib = -1;
};

// Connects to `socket_path` and runs the pairs, with the server's CPU over them.
ServerRun RunAgainst(const std::string& server, pid_t pid, const std::string& socket_path,
                     const PairOptions& options) {
  ServerRun run{.server = server};
  auto channel = ReconnectingUnixChannel(socket_path);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "cannot connect to %s\n", server.c_str());
    std::exit(1);
  }
  const CpuUsage before = ProcessCpuUsage(pid);
  run.pairs = RunPairs(channel, options);
  const CpuUsage after = ProcessCpuUsage(pid);
  run.cpu_s = after.total_seconds() - before.total_seconds();
  run.hwm_kib = ProcessStatusKiB(pid, "VmHWM");
  return run;
}

ServerRun RunPlugin(BenchSession& session, const PairOptions& options) {
  session.ResetStateDb();
  session.SetLatency(0);
  auto plugin = session.StartPlugin();
  ServerRun run = RunAgainst("oxide-csi-plugin (controller, sim L=0)", plugin->pid(),
                             session.rig().plugin().socket_path(), options);
  session.TakeRequestLog();
  plugin->Signal(SIGTERM);
  plugin->WaitExit();
  return run;
}

// Empty when the binary is absent (`why` says so).
std::optional<ServerRun> RunHostpath(const PairOptions& options, std::string* why) {
  const std::string binary = HostpathBinary();
  if (access(binary.c_str(), X_OK) != 0) {
    *why = binary + " is not there (or not executable)";
    return std::nullopt;
  }
  TempDir dir;
  mkdir(dir.File("sock").c_str(), 0755);
  const std::string socket_path = dir.File("sock/csi.sock");
  const std::string log_path = dir.File("hostpath.log");
  ChildProcess driver(binary,
                      {"--endpoint", "unix://" + socket_path, "--nodeid", "bench-node",
                       "--statedir", dir.File("state")},
                      log_path);
  if (!driver.WaitSocket(socket_path, std::chrono::seconds(15))) {
    *why = binary + " did not serve; its log:\n" + ReadFile(log_path);
    return std::nullopt;
  }
  ServerRun run =
      RunAgainst("hostpathplugin (Go reference driver)", driver.pid(), socket_path, options);
  driver.Stop();
  return run;
}

void PrintErrors(const ServerRun& run) {
  for (const auto& [key, count] : run.pairs.errors) {
    std::printf("  %s errors: %s x%llu, e.g. \"%s\"\n", run.server.c_str(), key.c_str(),
                static_cast<unsigned long long>(count), run.pairs.examples.at(key).c_str());
  }
}

}  // namespace

void RunPeerComparison(BenchSession& session, int pairs, int concurrency) {
  const PairOptions options{.pairs = pairs, .concurrency = concurrency, .name_prefix = "peer-vol-"};
  std::printf(
      "== peer: %d CreateVolume + DeleteVolume pairs (%llu GiB, mount ext4, "
      "SINGLE_NODE_WRITER; no publish), %d callers, one async client ==\n",
      pairs, static_cast<unsigned long long>(options.size_bytes >> 30), concurrency);
  std::vector<ServerRun> runs;
  runs.push_back(RunPlugin(session, options));
  std::string why;
  if (auto hostpath = RunHostpath(options, &why)) runs.push_back(std::move(*hostpath));
  TextTable table({"server", "pairs OK", "failed", "wall s", "pairs/s", "pair p50/p99 ms",
                   "Create p50/p99 ms", "Delete p50/p99 ms", "server CPU µs/pair", "VmHWM MiB"});
  for (ServerRun& run : runs) {
    PairResult& r = run.pairs;
    table.Add({run.server, std::to_string(r.ok), std::to_string(r.failed), Fixed(r.wall_s, 2),
               Fixed(r.ok / r.wall_s, 0),
               MsPair(Quantile(r.pair_ms, 0.5), Quantile(r.pair_ms, 0.99)),
               MsPair(Quantile(r.create_ms, 0.5), Quantile(r.create_ms, 0.99)),
               MsPair(Quantile(r.delete_ms, 0.5), Quantile(r.delete_ms, 0.99)),
               r.ok > 0 ? Fixed(run.cpu_s * 1e6 / r.ok, 0) : kNoValue, Fixed(MiB(run.hwm_kib), 1)});
  }
  table.Print(stdout);
  for (const ServerRun& run : runs)
    PrintErrors(run);
  if (!why.empty()) std::printf("hostpathplugin part skipped: %s\n", why.c_str());
}

}  // namespace oxide::bench
