// The simulator, the plugin's configuration and the stopped instances that every part of one
// controller_bench run shares, with the helpers they use to start the plugin and read the sim.
// Main thread only.
#pragma once

#include <grpcpp/channel.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/controller_rig.h"

namespace oxide::bench {

class BenchSession {
 public:
  // Starts oxide-sim with `sim_args`; the plugin gets OXIDE_BENCH_PLUGIN_ARGS on top of the rig's.
  explicit BenchSession(std::vector<std::string> sim_args);

  bool ok() { return rig_.sim().running(); }
  testing::ControllerRig& rig() { return rig_; }

  // The ids of `count` stopped instances (made when first needed, then reused); exits on error.
  std::vector<std::string> Nodes(int count);
  // Every /v1 request of the sim answers after `latency_ms` from now on; exits on error.
  void SetLatency(int latency_ms);
  // Deletes the plugin's state database, so the next plugin process starts from nothing. The
  // plugin must not be running.
  void ResetStateDb();
  // Starts the plugin and waits until it serves and its start-up credentials check is done; exits
  // with the plugin's log on failure.
  std::unique_ptr<testing::PluginProcess> StartPlugin();
  // A channel to the plugin that is connected already, so the first calls do not wait.
  std::shared_ptr<grpc::Channel> ConnectedChannel();
  // Oxide requests in the sim's request log, by operationId; clears the log.
  std::map<std::string, int> TakeRequestLog();
  // Bytes in the plugin's log file so far: where the next plugin process's lines begin.
  size_t LogSize();

 private:
  testing::ControllerRig rig_;
  std::vector<std::string> nodes_;
};

}  // namespace oxide::bench
