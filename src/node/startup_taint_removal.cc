#include "node/startup_taint_removal.h"

#include <utility>

namespace oxide::node {

StartupTaintRemoval::StartupTaintRemoval(Clock* clock, Options options, Step step,
                                         Finished finished)
    : options_(std::move(options)),
      step_(std::move(step)),
      finished_(std::move(finished)),
      retry_(
          clock, BackoffRetry::TimingOf(options_), [this] { PassNow(); }, [this] { Report(); }) {}

void StartupTaintRemoval::Start() {
  retry_.Start();
  retry_.AttemptNow();
}

void StartupTaintRemoval::PassNow() {
  step_(retry_.Guard<StatusOr<TaintStep>>(
      [this](StatusOr<TaintStep> step) { OnPass(std::move(step)); }));
}

void StartupTaintRemoval::OnPass(StatusOr<TaintStep> step) {
  if (!step.ok()) {
    // Logged when the failure is new; a failure that repeats is in the minute's report line.
    if (last_error_ != step.status().message()) {
      log::Warn("cannot remove the startup taint " + std::string(kAgentNotReadyTaint) +
                    " from Node " + options_.node_name +
                    " yet (pods with Oxide volumes are not scheduled to it meanwhile); retrying",
                {{"error", step.status().message()},
                 {"retry_in_ms", log::Num(static_cast<int64_t>(retry_.next_delay().count()))}});
    }
    last_error_ = step.status().message();
    last_was_conflict_ = false;
  } else {
    last_error_.clear();
    switch (*step) {
      case TaintStep::kAbsent:
      case TaintStep::kRemoved:
        Finish(*step);
        return;
      case TaintStep::kNotRegistered:
        if (!waiting_logged_) {
          waiting_logged_ = true;
          log::Info("waiting for node-driver-registrar to register " + options_.driver_name +
                        " on Node " + options_.node_name +
                        " (its CSINode lists the driver) "
                        "before removing the startup taint " +
                        kAgentNotReadyTaint,
                    {});
        }
        last_was_conflict_ = false;
        break;
      case TaintStep::kConflict:
        // Someone changed the taints between the read and the patch: read again soon, backing
        // off if it keeps happening.
        ++conflicts_;
        if (!last_was_conflict_) retry_.ResetDelay();
        last_was_conflict_ = true;
        log::Info("the taints of Node " + options_.node_name +
                      " changed while the startup taint was being removed; reading them again",
                  {{"retry_in_ms", log::Num(static_cast<int64_t>(retry_.next_delay().count()))}});
        break;
    }
  }
  retry_.RetryLater();
}

void StartupTaintRemoval::Report() {
  const std::string what =
      last_error_.empty()
          ? "still waiting for node-driver-registrar to register " + options_.driver_name +
                " on Node " + options_.node_name +
                " (is its container running? kubectl get csinode " + options_.node_name + ")"
          : "still cannot remove the startup taint from Node " + options_.node_name;
  log::Warn(what + "; the taint " + std::string(kAgentNotReadyTaint) + " stays until then",
            {{"waited_seconds", retry_.WaitedSeconds()}, {"last_error", last_error_}});
}

void StartupTaintRemoval::Finish(TaintStep step) {
  retry_.Stop();
  if (step == TaintStep::kRemoved) {
    log::Info("removed the startup taint " + std::string(kAgentNotReadyTaint) + " from Node " +
                  options_.node_name,
              {{"waited_seconds", retry_.WaitedSeconds()},
               {"conflicts", log::Num(static_cast<int64_t>(conflicts_))}});
  } else {
    log::Info("Node " + options_.node_name + " does not carry the startup taint " +
                  kAgentNotReadyTaint + ": nothing to remove",
              {});
  }
  finished_(step);
}

}  // namespace oxide::node
