// Probe benchmark: latency and throughput of CSI Probe through the real unix socket at 1, 16 and
// 64 concurrent callers against the real plugin binary, its idle RSS, and the cost of the
// completion-queue → libuv loop handoff (the real CsiServer vs. a server answering on the
// completion-queue thread, same process, same client).
//
//   probe_bench [--duration-ms N] [--client-threads N]
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "config/settings.h"
#include "direct_probe_server.h"
#include "engine/identity_service.h"
#include "loop/event_loop.h"
#include "probe_load.h"
#include "rpc/csi_server.h"
#include "store/state_db.h"
#include "support/plugin_setup.h"

namespace oxide::bench {
namespace {

using namespace std::chrono_literals;

long RssKiB(pid_t pid, const char* field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field) + 1));
  }
  return -1;
}

void PrintRow(const char* label, int concurrency, const LoadResult& r) {
  std::printf("%-28s %5d %12.0f %10.1f %10.1f %10.1f %8llu\n", label, concurrency,
              r.calls_per_second, r.p50_us, r.p99_us, r.p999_us,
              static_cast<unsigned long long>(r.errors));
}

void PrintHeader() {
  std::printf("%-28s %5s %12s %10s %10s %10s %8s\n", "server", "conc", "calls/s", "p50 us",
              "p99 us", "p99.9 us", "errors");
}

// The real rpc layer and Identity service in this process, the loop on its own thread.
class InProcessPlugin {
 public:
  explicit InProcessPlugin(const std::string& dir) : socket_(dir + "/inproc.sock") {
    settings_.driver_name = kDefaultDriverName;
    db_ = std::move(store::StateDb::Open(dir + "/inproc-state/state.db").value());
    identity_ = std::make_unique<engine::IdentityService>(
        settings_,
        std::vector<engine::IdentityService::HealthCheck>{[this] { return db_->Health(); }});
    rpc::CsiHandlers handlers;
    identity_->Register(handlers);
    server_ = std::make_unique<rpc::CsiServer>(&loop_, std::move(handlers));
    if (!server_->Start({.socket_path = socket_}).ok()) std::abort();
    thread_ = std::thread([this] { loop_.Run(); });
  }
  ~InProcessPlugin() {
    loop_.Post([this] { server_->Shutdown(1s, [this] { loop_.Stop(); }); });
    thread_.join();
  }
  const std::string& socket() const { return socket_; }

 private:
  std::string socket_;
  Settings settings_;
  std::unique_ptr<store::StateDb> db_;
  EventLoop loop_;
  std::unique_ptr<engine::IdentityService> identity_;
  std::unique_ptr<rpc::CsiServer> server_;
  std::thread thread_;
};

}  // namespace

int Main(int argc, char** argv) {
  auto duration = 3000ms;
  int client_threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--duration-ms") duration = std::chrono::milliseconds(std::stoi(argv[i + 1]));
    if (flag == "--client-threads") client_threads = std::stoi(argv[i + 1]);
  }
  const auto warmup = 500ms;
  std::printf(
      "probe_bench: %lld ms per run after %lld ms warm-up, %d client thread(s), %u cores\n\n",
      static_cast<long long>(duration.count()), static_cast<long long>(warmup.count()),
      client_threads, std::thread::hardware_concurrency());

  testing::TempDir dir;

  // 1. The loop handoff: same process, same client, with and without the hop to the loop.
  std::printf("== loop handoff (in-process servers) ==\n");
  PrintHeader();
  double handoff_p50[2] = {0, 0};
  {
    DirectProbeServer direct(dir.File("direct.sock"));
    auto channel = testing::UnixChannel(dir.File("direct.sock"));
    for (int c : {1, 16}) {
      LoadResult r = RunProbeLoad(channel, c, client_threads, warmup, duration);
      PrintRow("cq-thread answers (baseline)", c, r);
      if (c == 1) handoff_p50[0] = r.p50_us;
    }
  }
  {
    InProcessPlugin plugin(dir.path());
    auto channel = testing::UnixChannel(plugin.socket());
    for (int c : {1, 16}) {
      LoadResult r = RunProbeLoad(channel, c, client_threads, warmup, duration);
      PrintRow("CsiServer via libuv loop", c, r);
      if (c == 1) handoff_p50[1] = r.p50_us;
    }
  }
  std::printf("handoff cost at p50, 1 caller: %.1f us (target < 20 us)\n\n",
              handoff_p50[1] - handoff_p50[0]);

  // 2. The real binary.
  std::printf("== oxide-csi-plugin binary (--mode=all) ==\n");
  testing::PluginSetup setup("all");
  setup.args.push_back("--log-level=warn");
  auto plugin = setup.Start();
  if (!plugin->running()) return 1;
  std::this_thread::sleep_for(1s);
  long idle_rss = RssKiB(plugin->pid(), "VmRSS:");
  PrintHeader();
  auto channel = testing::UnixChannel(setup.socket_path());
  for (int c : {1, 16, 64}) {
    LoadResult r = RunProbeLoad(channel, c, client_threads, warmup, duration);
    PrintRow("plugin process", c, r);
  }
  long peak_rss = RssKiB(plugin->pid(), "VmHWM:");
  std::printf("\nplugin idle RSS: %.1f MiB (target < 15 MiB); peak RSS under load: %.1f MiB\n",
              static_cast<double>(idle_rss) / 1024.0, static_cast<double>(peak_rss) / 1024.0);
  plugin->Signal(SIGTERM);
  plugin->WaitExit();
  return 0;
}

}  // namespace oxide::bench

int main(int argc, char** argv) {
  return oxide::bench::Main(argc, argv);
}
