// The plugin's Prometheus endpoint: the metrics server on its own thread, and the loop timer that
// beats the heartbeat /healthz reads (once a second). Construct, Start() and Stop() on the loop
// thread; a scrape never runs on it.
#pragma once

#include <uv.h>

#include <memory>

#include "config/settings.h"
#include "metrics/metrics_server.h"
#include "util/status.h"

namespace oxide {

// The endpoint's address from the settings (--metrics-host, --metrics-port); `write_health` (may be
// null) is what /healthz reads of the state database.
metrics::MetricsServerOptions MetricsOptionsFromSettings(const Settings& settings,
                                                         const metrics::WriteHealth* write_health);

class MetricsEndpoint {
 public:
  MetricsEndpoint(uv_loop_t* loop, metrics::MetricsServerOptions options);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Listens, and starts the heartbeat; FAILED_PRECONDITION when it cannot listen.
  Status Start();
  // Stops serving (waits for a scrape being answered) and closes the timer.
  void Stop();
  uint16_t port() const { return server_.port(); }
  // "http://HOST:PORT/metrics" once started (an IPv6 host in brackets).
  std::string MetricsUrl() const;

 private:
  static void OnBeat(uv_timer_t* timer);

  uv_loop_t* loop_;
  std::string host_;
  metrics::LoopHeartbeat heartbeat_;
  metrics::MetricsServer server_;
  uv_timer_t* timer_ = nullptr;  // heap: freed by its close callback
};

}  // namespace oxide
