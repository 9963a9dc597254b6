#include "loop/turn_monitor.h"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <limits>

#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide {
namespace {

constexpr uint64_t kWarningEveryMs = 60'000;

uint64_t ThreadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace

uint64_t TurnMonitor::Summary::p99_at_most_us() const {
  if (turns == 0) return 0;
  const uint64_t wanted = turns - turns / 100;  // at least 99 % of the turns
  uint64_t seen = 0;
  for (size_t i = 0; i < kBucketBoundsUs.size(); ++i) {
    seen += histogram[i];
    if (seen >= wanted) return kBucketBoundsUs[i];
  }
  return std::numeric_limits<uint64_t>::max();
}

std::string TurnMonitor::Summary::HistogramText() const {
  std::string text;
  for (size_t i = 0; i < kBuckets; ++i) {
    if (!text.empty()) text += ' ';
    text += i < kBucketBoundsUs.size() ? "<=" + std::to_string(kBucketBoundsUs[i])
                                       : ">" + std::to_string(kBucketBoundsUs.back());
    text += "us:" + std::to_string(histogram[i]);
  }
  return text;
}

TurnMonitor::TurnMonitor(uv_loop_t* loop, std::chrono::milliseconds warn_after)
    : loop_(loop), warn_after_(warn_after), prepare_(new uv_prepare_t), child_(new uv_signal_t) {
  uv_prepare_init(loop, prepare_);
  prepare_->data = this;
  uv_signal_init(loop, child_);
  child_->data = this;
  // Makes libuv add up the time it waits for I/O (uv_metrics_idle_time).
  uv_loop_configure(loop, UV_METRICS_IDLE_TIME);
}

TurnMonitor::~TurnMonitor() {
  CloseHandles();
}

void TurnMonitor::CloseHandles() {
  if (prepare_ == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(prepare_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_prepare_t*>(handle); });
  uv_close(reinterpret_cast<uv_handle_t*>(child_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_signal_t*>(handle); });
  prepare_ = nullptr;
  child_ = nullptr;
}

void TurnMonitor::Start() {
  if (started_ || prepare_ == nullptr) return;
  started_ = true;
  uv_prepare_start(prepare_, &TurnMonitor::OnPrepare);
  uv_signal_start(
      child_,
      [](uv_signal_t* handle, int) { static_cast<TurnMonitor*>(handle->data)->SignalArrived(); },
      SIGCHLD);
  // Neither keeps the loop alive by itself.
  uv_unref(reinterpret_cast<uv_handle_t*>(prepare_));
  uv_unref(reinterpret_cast<uv_handle_t*>(child_));
}

void TurnMonitor::Stop() {
  if (prepare_ == nullptr) return;
  CloseHandles();
  const Summary& s = summary_;
  log::Info("event loop turns",
            {{"turns", std::to_string(s.turns)},
             {"unmeasured_turns_with_a_signal", std::to_string(s.unmeasured)},
             {"busy_ms", log::Millis(s.busy)},
             {"longest_ms", log::Millis(s.longest)},
             {"over_1ms", std::to_string(s.over_1ms)},
             {"longest_cpu_ms", log::Millis(s.longest_cpu)},
             {"over_1ms_cpu", std::to_string(s.over_1ms_cpu)},
             {"p99_at_most_us", s.turns == 0 || s.p99_at_most_us() != UINT64_MAX
                                    ? std::to_string(s.p99_at_most_us())
                                    : "over " + std::to_string(kBucketBoundsUs.back())},
             {"histogram", s.HistogramText()}});
}

// Prepare handles run once per turn, just before the loop waits for I/O. Between two of them the
// loop waited once (uv_metrics_idle_time counts it) and was busy for the rest.
void TurnMonitor::OnPrepare(uv_prepare_t* handle) {
  auto* self = static_cast<TurnMonitor*>(handle->data);
  const uint64_t now = uv_hrtime();
  const uint64_t idle = uv_metrics_idle_time(self->loop_);
  const uint64_t cpu = ThreadCpuNs();
  if (self->signalled_) {
    ++self->summary_.unmeasured;
  } else if (self->has_last_) {
    const uint64_t elapsed = now - self->last_now_ns_;
    const uint64_t waited = std::min(idle - self->last_idle_ns_, elapsed);
    self->Record(std::chrono::nanoseconds(elapsed - waited),
                 std::chrono::nanoseconds(cpu - self->last_cpu_ns_));
  }
  self->signalled_ = false;
  self->has_last_ = true;
  self->last_now_ns_ = now;
  self->last_idle_ns_ = idle;
  self->last_cpu_ns_ = cpu;
}

void TurnMonitor::Record(std::chrono::nanoseconds busy, std::chrono::nanoseconds cpu) {
  Summary& s = summary_;
  ++s.turns;
  s.busy += busy;
  s.longest = std::max(s.longest, busy);
  s.longest_cpu = std::max(s.longest_cpu, cpu);
  if (cpu > std::chrono::milliseconds(1)) ++s.over_1ms_cpu;
  const auto us =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(busy).count());
  if (us > 1000) ++s.over_1ms;
  auto bound = std::lower_bound(kBucketBoundsUs.begin(), kBucketBoundsUs.end(), us);
  ++s.histogram[static_cast<size_t>(bound - kBucketBoundsUs.begin())];
  metrics::Families().loop_turn_duration.Observe(std::chrono::duration<double>(busy).count());

  if (busy <= warn_after_) return;
  ++stalls_since_warning_;
  const uint64_t now_ms = uv_now(loop_);
  if (warned_ && now_ms - last_warning_ms_ < kWarningEveryMs) return;
  log::Warn("one event loop turn kept the loop thread busy; every call waited meanwhile",
            {{"busy_ms", log::Millis(busy)},
             {"limit_ms", std::to_string(warn_after_.count())},
             {"such_turns_since_last_warning", std::to_string(stalls_since_warning_)}});
  warned_ = true;
  last_warning_ms_ = now_ms;
  stalls_since_warning_ = 0;
}

}  // namespace oxide
