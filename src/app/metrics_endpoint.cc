#include "app/metrics_endpoint.h"

#include "metrics/plugin_metrics.h"

namespace oxide {

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
