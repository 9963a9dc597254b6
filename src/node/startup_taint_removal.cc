#include "node/startup_taint_removal.h"

#include <algorithm>
#include <utility>

namespace oxide::node {

StartupTaintRemoval::StartupTaintRemoval(Clock* clock, Options options, Step step,
                                         Finished finished)
    : clock_(clock),
      options_(std::move(options)),
      step_(std::move(step)),
      finished_(std::move(finished)) {}

StartupTaintRemoval::~StartupTaintRemoval() {
  CancelTimers();
  *self_ = nullptr;
}

void StartupTaintRemoval::Start() {
  running_ = true;
  since_ = clock_->Now();
  next_retry_ = options_.first_retry;
  report_timer_ = clock_->StartTimer(options_.report_every, [this] { Report(); });
  PassNow();
}

void StartupTaintRemoval::Stop() {
  running_ = false;
  CancelTimers();
}

void StartupTaintRemoval::PassNow() {
  pass_timer_ = 0;
  ++passes_;
  step_([weak = std::weak_ptr<StartupTaintRemoval*>(self_)](StatusOr<TaintStep> step) {
    std::shared_ptr<StartupTaintRemoval*> self = weak.lock();
    if (self && *self != nullptr) (*self)->OnPass(std::move(step));
  });
}

void StartupTaintRemoval::OnPass(StatusOr<TaintStep> step) {
  if (!running_) return;
  std::chrono::milliseconds delay = next_retry_;
  if (!step.ok()) {
    // Logged when the failure is new; a failure that repeats is in the minute's report line.
    if (last_error_ != step.status().message()) {
      log::Warn("cannot remove the startup taint " + std::string(kAgentNotReadyTaint) +
                    " from Node " + options_.node_name +
                    " yet (pods with Oxide volumes are not scheduled to it meanwhile); retrying",
                {{"error", step.status().message()},
                 {"retry_in_ms", log::Num(static_cast<int64_t>(delay.count()))}});
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
        if (!last_was_conflict_) delay = next_retry_ = options_.first_retry;
        last_was_conflict_ = true;
        log::Info("the taints of Node " + options_.node_name +
                      " changed while the startup taint was being removed; reading them again",
                  {{"retry_in_ms", log::Num(static_cast<int64_t>(delay.count()))}});
        break;
    }
  }
  next_retry_ = std::min(delay * 2, options_.max_retry);
  pass_timer_ = clock_->StartTimer(delay, [this] { PassNow(); });
}

void StartupTaintRemoval::Report() {
  const std::string what =
      last_error_.empty()
          ? "still waiting for node-driver-registrar to register " + options_.driver_name +
                " on Node " + options_.node_name +
                " (is its container running? kubectl get csinode " + options_.node_name + ")"
          : "still cannot remove the startup taint from Node " + options_.node_name;
  log::Warn(what + "; the taint " + std::string(kAgentNotReadyTaint) + " stays until then",
            {{"waited_seconds", WaitedSeconds()}, {"last_error", last_error_}});
  report_timer_ = clock_->StartTimer(options_.report_every, [this] { Report(); });
}

void StartupTaintRemoval::Finish(TaintStep step) {
  running_ = false;
  CancelTimers();
  if (step == TaintStep::kRemoved) {
    log::Info("removed the startup taint " + std::string(kAgentNotReadyTaint) + " from Node " +
                  options_.node_name,
              {{"waited_seconds", WaitedSeconds()},
               {"conflicts", log::Num(static_cast<int64_t>(conflicts_))}});
  } else {
    log::Info("Node " + options_.node_name + " does not carry the startup taint " +
                  kAgentNotReadyTaint + ": nothing to remove",
              {});
  }
  finished_(step);
}

log::Number StartupTaintRemoval::WaitedSeconds() const {
  return log::Num(static_cast<int64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(clock_->Now() - since_).count()));
}

void StartupTaintRemoval::CancelTimers() {
  for (Clock::TimerId* timer : {&pass_timer_, &report_timer_}) {
    if (*timer != 0) clock_->CancelTimer(*timer);
    *timer = 0;
  }
}

}  // namespace oxide::node
