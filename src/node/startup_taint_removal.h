// The node plugin's removal of its startup taint (node/startup_taint_steps.h) once it serves:
// runs one pass of the steps now, and again after a backoff (1 s doubling to 10 s) while the
// CSINode does not list the driver yet, after a conflict (spec.taints changed between the read
// and the patch), or after a failure, until the Node no longer carries the taint. A failure is
// logged with what to do and retried, never fatal; while it waits for the registration or keeps
// failing, one line every minute says so. Driven by Clock timers, so tests advance a ManualClock.
// Loop thread only (the thread that runs the clock's timers); `step` may complete inside the call
// or later on that thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "loop/clock.h"
#include "node/backoff_retry.h"
#include "node/startup_taint_steps.h"
#include "util/log.h"
#include "util/status.h"

namespace oxide::node {

class StartupTaintRemoval {
 public:
  struct Options {
    std::string node_name;
    std::string driver_name;
    std::chrono::milliseconds first_retry{1000};
    std::chrono::milliseconds max_retry{10000};
    std::chrono::milliseconds report_every{60000};
  };
  using StepDone = std::function<void(StatusOr<TaintStep>)>;
  // Starts one pass (RemoveStartupTaintOnce) and calls `done` once, on the loop thread.
  using Step = std::function<void(StepDone done)>;
  // The taint is gone (kRemoved) or was never there (kAbsent). Called at most once; it must not
  // destroy this object.
  using Finished = std::function<void(TaintStep)>;

  StartupTaintRemoval(Clock* clock, Options options, Step step, Finished finished);
  // Destroying it cancels the timers; a pass still in flight completes into nothing.
  StartupTaintRemoval(const StartupTaintRemoval&) = delete;
  StartupTaintRemoval& operator=(const StartupTaintRemoval&) = delete;

  // Runs the first pass now.
  void Start();
  // Stops (a signal): no more passes or lines, `finished` is not called.
  void Stop() { retry_.Stop(); }

  bool running() const { return retry_.running(); }
  int passes() const { return retry_.attempts(); }  // passes started since Start

 private:
  void PassNow();
  void OnPass(StatusOr<TaintStep> step);
  void Report();
  void Finish(TaintStep step);

  const Options options_;
  Step step_;
  Finished finished_;

  bool waiting_logged_ = false;
  bool last_was_conflict_ = false;
  std::string last_error_;  // of the latest pass; empty when it succeeded
  int conflicts_ = 0;
  BackoffRetry retry_;
};

}  // namespace oxide::node
