#include "app/shutdown.h"

#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "util/log.h"

namespace oxide {
namespace {

// Operations named one by one in a log record; the rest are counted.
constexpr size_t kNamedInLog = 20;

std::string Listed(const std::vector<std::string>& lines) {
  std::string text;
  for (size_t i = 0; i < lines.size() && i < kNamedInLog; ++i) {
    if (!text.empty()) text += "; ";
    text += lines[i];
  }
  if (lines.size() > kNamedInLog) {
    text += "; and " + std::to_string(lines.size() - kNamedInLog) + " more";
  }
  return text;
}

}  // namespace

SignalWatch::SignalWatch(EventLoop* loop, std::function<void()> on_signal)
    : on_signal_(std::move(on_signal)) {
  for (uv_signal_t* handle : {&term_, &interrupt_}) {
    uv_signal_init(loop->uv(), handle);
    handle->data = this;
  }
  uv_signal_start(&term_, &SignalWatch::OnSignal, SIGTERM);
  uv_signal_start(&interrupt_, &SignalWatch::OnSignal, SIGINT);
}

void SignalWatch::Close() {
  for (uv_signal_t* handle : {&term_, &interrupt_}) {
    uv_close(reinterpret_cast<uv_handle_t*>(handle), nullptr);
  }
}

void SignalWatch::OnSignal(uv_signal_t* handle, int signum) {
  auto* self = static_cast<SignalWatch*>(handle->data);
  if (self->received_) {
    log::Warn("second signal during shutdown: exiting now", {{"signal", std::to_string(signum)}});
    std::_Exit(1);
  }
  self->received_ = true;
  log::Info("signal received: shutting down",
            {{"signal", signum == SIGTERM ? "SIGTERM" : "SIGINT"}});
  self->on_signal_();
}

OperationDrain::OperationDrain(Clock* clock, std::vector<Source> sources)
    : clock_(clock), sources_(std::move(sources)) {}

OperationDrain::~OperationDrain() {
  *alive_ = false;
  if (deadline_timer_ != 0) clock_->CancelTimer(deadline_timer_);
}

size_t OperationDrain::in_flight() const {
  size_t count = 0;
  for (const auto& [name, operations] : sources_)
    count += operations->in_flight();
  return count;
}

std::vector<std::string> OperationDrain::Left() const {
  std::vector<std::string> left;
  for (const auto& [name, operations] : sources_) {
    for (std::string& line : operations->Describe())
      left.push_back(name + ": " + line);
  }
  return left;
}

void OperationDrain::Start(Clock::TimePoint deadline, Done done) {
  done_ = std::move(done);
  started_ = clock_->Now();
  const size_t count = in_flight();
  if (count == 0) return Finish({});
  auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_->Now());
  log::Info("waiting for operations in flight to finish before exit",
            {{"count", log::Num(static_cast<uint64_t>(count))},
             {"operations", Listed(Left())},
             {"remaining_ms", log::Num(static_cast<int64_t>(remaining.count()))}});
  deadline_timer_ = clock_->StartTimer(remaining, [this] {
    deadline_timer_ = 0;
    Finish(Left());
  });
  Check();
}

void OperationDrain::Check() {
  if (finished_) return;
  for (const auto& [name, operations] : sources_) {
    if (operations->in_flight() == 0) continue;
    // One listener at a time: it re-checks every source when this one drains.
    operations->WhenIdle([this, alive = alive_] {
      if (*alive) Check();
    });
    return;
  }
  Finish({});
}

void OperationDrain::Finish(std::vector<std::string> left) {
  if (finished_) return;
  finished_ = true;
  if (deadline_timer_ != 0) clock_->CancelTimer(std::exchange(deadline_timer_, 0));
  auto waited =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_->Now() - started_).count();
  if (left.empty()) {
    log::Info("no operation left in flight",
              {{"waited_ms", log::Num(static_cast<int64_t>(waited))}});
  } else {
    log::Warn(
        "shutdown grace over: operations left unfinished (their journal entries are reconciled "
        "with Oxide when this replica starts again; see docs/replicas.md for a replaced pod)",
        {{"count", log::Num(static_cast<uint64_t>(left.size()))},
         {"operations", Listed(left)},
         {"waited_ms", log::Num(static_cast<int64_t>(waited))}});
  }
  Done done = std::move(done_);
  if (done) done(std::move(left));
}

}  // namespace oxide
