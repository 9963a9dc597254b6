// The HTTP endpoint Prometheus scrapes: GET /metrics (text format 0.0.4, rendered from the
// registry's atomics) and GET /healthz, the plugin's liveness: 200 while the event loop turns and
// the state database takes writes; 503 with the reason when the loop's heartbeat is older than
// `stale_after`, or the last commit failed, or a commit has run longer than `commit_hung_after`
// (WriteHealth). It never depends on the Oxide API. libmicrohttpd serves it on its own thread; a
// scrape reads only atomics, so the event loop never waits for one. Anything else gets 404 (other
// paths), 405 (other methods) or 431 (headers beyond `max_request_bytes`), and no other effect.
//
// Start()/Stop() and the destructor: the owning (main) thread. The handlers run on the server's
// thread. LoopHeartbeat::Beat: the loop thread; everything else of it: any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "metrics/registry.h"
#include "metrics/write_health.h"
#include "util/status.h"

struct MHD_Daemon;

namespace oxide::metrics {

// Milliseconds on a steady clock; the server and the heartbeat must read the same one.
using MonotonicMillis = std::function<int64_t()>;
int64_t SteadyMillis();

// When the event loop last turned (the plugin beats it from a loop timer).
class LoopHeartbeat {
 public:
  void Beat(int64_t now_ms) { last_ms_.store(now_ms, std::memory_order_relaxed); }
  int64_t last_ms() const { return last_ms_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> last_ms_{0};
};

struct MetricsServerOptions {
  std::string host = "0.0.0.0";  // an IPv4 or IPv6 literal
  uint16_t port = 0;             // 0 = any free port (tests); port() tells
  std::chrono::milliseconds stale_after{10000};
  // May be null (/healthz then does not look at the database); otherwise it outlives the server.
  const WriteHealth* write_health = nullptr;
  std::chrono::milliseconds commit_hung_after{10000};
  size_t max_request_bytes = 16384;  // request line + headers
  unsigned connection_limit = 32;
  unsigned idle_timeout_s = 10;
  MonotonicMillis now_ms;  // default: SteadyMillis
};

class MetricsServer {
 public:
  // `heartbeat` may be null: /healthz then does not look at the loop.
  MetricsServer(const Registry* registry, const LoopHeartbeat* heartbeat,
                MetricsServerOptions options);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  Status Start();  // FAILED_PRECONDITION naming the address when it cannot listen
  void Stop();
  uint16_t port() const { return port_; }
  uint64_t scrapes() const { return scrapes_.load(std::memory_order_relaxed); }

 private:
  struct Internals;
  // The server's thread: why /healthz answers 503, or "" when it answers 200.
  std::string Unhealthy() const;

  const Registry* registry_;
  const LoopHeartbeat* heartbeat_;
  MetricsServerOptions options_;
  MHD_Daemon* daemon_ = nullptr;
  uint16_t port_ = 0;
  std::atomic<uint64_t> scrapes_{0};
};

}  // namespace oxide::metrics
