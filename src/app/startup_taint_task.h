// Runs the node plugin's startup taint removal (node/startup_taint_removal.h) on the plugin's
// loop once the CSI socket serves: the timers run on the loop, each pass's blocking exchanges with
// the API server on libuv's worker pool, so the loop never waits for the API server. Stop() (a
// signal) cancels the timers and ends a pass in flight within about a second; the loop ends once
// that pass's completion has run. Skipped (nothing started) outside Kubernetes (no NODE_NAME or
// KUBERNETES_SERVICE_HOST) or with --remove-startup-taint=false. Loop thread only.
#pragma once

#include <uv.h>

#include <memory>

#include "app/kubernetes_call.h"
#include "config/settings.h"
#include "loop/clock.h"
#include "node/startup_taint_removal.h"

namespace oxide {

class StartupTaintTask {
 public:
  // `uv`, `clock` and `settings` must outlive this object.
  StartupTaintTask(uv_loop_t* uv, Clock* clock, const Settings& settings);
  ~StartupTaintTask();
  StartupTaintTask(const StartupTaintTask&) = delete;
  StartupTaintTask& operator=(const StartupTaintTask&) = delete;

  // Whether the settings ask for the removal here (and why not, logged at debug level).
  static bool Wanted(const Settings& settings);
  void Start();
  void Stop();

 private:
  void StartPass(node::StartupTaintRemoval::StepDone done);

  const Settings& settings_;
  KubernetesCall call_;  // the pass in flight
  std::unique_ptr<node::StartupTaintRemoval> removal_;
};

}  // namespace oxide
