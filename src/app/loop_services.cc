#include "app/loop_services.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

#include "metrics/plugin_metrics.h"

namespace oxide {

size_t ResidentBytes() {
  FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int read = std::fscanf(statm, "%lu %lu", &size, &resident);
  std::fclose(statm);
  return read == 2 ? resident * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

MemoryTrim::MemoryTrim(uv_loop_t* loop, std::chrono::milliseconds period, size_t slack)
    : loop_(loop), period_(period), slack_(slack) {
  timer_.data = this;
  work_.data = this;
}

void MemoryTrim::Start() {
  uv_timer_init(loop_, &timer_);
  started_ = true;
  baseline_ = ResidentBytes();
  const auto ms = static_cast<uint64_t>(period_.count());
  uv_timer_start(&timer_, OnTimer, ms, ms);
  uv_unref(reinterpret_cast<uv_handle_t*>(&timer_));  // never what keeps the loop running
}

void MemoryTrim::Stop() {
  if (started_ && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&timer_))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  }
}

bool MemoryTrim::CheckAndTrim() {
  const size_t now = ResidentBytes();
  if (baseline_.load() == 0) {  // the first measure is the baseline
    baseline_ = now;
    return false;
  }
  if (now == 0 || now <= baseline_.load() + slack_) {
    if (now != 0 && now < baseline_.load()) baseline_ = now;
    return false;
  }
  malloc_trim(0);
  baseline_ = ResidentBytes();
  ++trims_;
  return true;
}

void MemoryTrim::OnTimer(uv_timer_t* timer) {
  auto* self = static_cast<MemoryTrim*>(timer->data);
  if (self->work_queued_) return;
  self->work_queued_ = true;
  uv_queue_work(
      self->loop_, &self->work_,
      [](uv_work_t* work) { static_cast<MemoryTrim*>(work->data)->CheckAndTrim(); },
      [](uv_work_t* work, int) { static_cast<MemoryTrim*>(work->data)->work_queued_ = false; });
}

metrics::MetricsServerOptions MetricsOptionsFromSettings(const Settings& settings,
                                                         const metrics::WriteHealth* write_health) {
  metrics::MetricsServerOptions options;
  options.host = settings.metrics_host;
  options.port = settings.metrics_port;
  options.write_health = write_health;
  return options;
}

MetricsEndpoint::MetricsEndpoint(uv_loop_t* loop, metrics::MetricsServerOptions options)
    : loop_(loop),
      host_(options.host),
      server_(&metrics::ProcessRegistry(), &heartbeat_, std::move(options)) {}

MetricsEndpoint::~MetricsEndpoint() {
  Stop();
}

Status MetricsEndpoint::Start() {
  heartbeat_.Beat(metrics::SteadyMillis());
  if (Status started = server_.Start(); !started.ok()) return started;
  timer_ = new uv_timer_t;
  uv_timer_init(loop_, timer_);
  timer_->data = this;
  uv_timer_start(timer_, &MetricsEndpoint::OnBeat, 1000, 1000);
  return Status::Ok();
}

void MetricsEndpoint::Stop() {
  server_.Stop();
  if (timer_ == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(timer_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_timer_t*>(handle); });
  timer_ = nullptr;
}

std::string MetricsEndpoint::MetricsUrl() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port()) + "/metrics";
}

void MetricsEndpoint::OnBeat(uv_timer_t* timer) {
  static_cast<MetricsEndpoint*>(timer->data)->heartbeat_.Beat(metrics::SteadyMillis());
}

}  // namespace oxide
