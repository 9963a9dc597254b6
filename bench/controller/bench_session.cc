// BenchSession: one oxide-sim and one plugin configuration for a whole controller_bench run.
#include "bench_session.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "support/volume_driver.h"

namespace oxide::bench {

BenchSession::BenchSession(std::vector<std::string> sim_args) : rig_("bench", std::move(sim_args)) {
  // Extra plugin flags for A/B runs, e.g. OXIDE_BENCH_PLUGIN_ARGS="--rpc-spin-us=0".
  if (const char* extra = std::getenv("OXIDE_BENCH_PLUGIN_ARGS")) {
    std::istringstream words(extra);
    for (std::string word; words >> word;)
      rig_.plugin().args.push_back(word);
  }
}

std::vector<std::string> BenchSession::Nodes(int count) {
  // bench-node-<i>, i counting on from the instances made before.
  for (int i = static_cast<int>(nodes_.size()); i < count; ++i) {
    nlohmann::json spec = {{"project", rig_.project()},
                           {"name", "bench-node-" + std::to_string(i)},
                           {"run_state", "stopped"}};
    nlohmann::json instance;
    if (rig_.Control("POST", "/__sim/instances", spec, &instance) != 201 || !instance.is_object()) {
      std::fprintf(stderr, "cannot create instances: %s\n", instance.dump().c_str());
      std::exit(1);
    }
    nodes_.push_back(instance.value("id", ""));
  }
  return {nodes_.begin(), nodes_.begin() + count};
}

void BenchSession::SetLatency(int latency_ms) {
  const nlohmann::json rule = {{"operation", "*"}, {"latency_ms", latency_ms}};
  const nlohmann::json faults = {{"rules", nlohmann::json::array({rule})}};
  nlohmann::json answer;
  if (rig_.Control("PUT", "/__sim/faults", faults, &answer) != 200) {
    std::fprintf(stderr, "cannot set the sim's latency: %s\n", answer.dump().c_str());
    std::exit(1);
  }
}

void BenchSession::ResetStateDb() {
  const std::string db = rig_.plugin().state_db();
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ignored;
    std::filesystem::remove(db + suffix, ignored);
  }
}

std::unique_ptr<testing::PluginProcess> BenchSession::StartPlugin() {
  auto plugin = rig_.LaunchPlugin();
  if (!plugin->WaitServing(rig_.plugin().socket_path())) {
    std::fprintf(stderr, "the plugin did not start; its log:\n%s\n", plugin->Log().c_str());
    std::exit(1);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // start-up credentials check
  return plugin;
}

std::shared_ptr<grpc::Channel> BenchSession::ConnectedChannel() {
  auto channel = testing::ReconnectingUnixChannel(rig_.plugin().socket_path());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "cannot connect to the plugin\n");
    std::exit(1);
  }
  return channel;
}

std::map<std::string, int> BenchSession::TakeRequestLog() {
  nlohmann::json log;
  rig_.Control("GET", "/__sim/requests", nullptr, &log);
  rig_.Control("DELETE", "/__sim/requests", nullptr, nullptr);
  std::map<std::string, int> counts;
  if (!log.is_object()) return counts;
  for (const nlohmann::json& request : log["requests"])
    ++counts[request.value("operation", "?")];
  return counts;
}

size_t BenchSession::LogSize() {
  std::error_code error;
  const auto size = std::filesystem::file_size(rig_.plugin().log_path(), error);
  return error ? 0 : static_cast<size_t>(size);
}

}  // namespace oxide::bench
