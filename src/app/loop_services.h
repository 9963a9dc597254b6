// The services a loop of the plugin carries beside the CSI work: LoopServices, what the process
// assembly (plugin.cc) lends the controller and node assemblies (the loop, the clock every loop
// component reads, the state database and the store thread that owns its connection; all of them
// outlive both assemblies); MemoryTrim, which gives memory back to the kernel after a burst; and
// MetricsEndpoint, the Prometheus endpoint and its heartbeat (the wait for spec.providerID serves
// one on its own loop too). Loop thread only, but for what is marked "any thread".
#pragma once

#include <uv.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "config/settings.h"
#include "loop/clock.h"
#include "loop/event_loop.h"
#include "metrics/metrics_server.h"
#include "store/group_commit.h"
#include "store/state_db.h"
#include "util/status.h"

namespace oxide {

// What the process assembly lends the controller and node assemblies; all of it outlives both.
struct LoopServices {
  EventLoop* loop;
  Clock* clock;
  store::StateDb* db;
  store::GroupCommit* commit;
};

// The process's resident set in bytes (/proc/self/statm); 0 when unreadable. Any thread.
size_t ResidentBytes();

// Gives memory back to the kernel after a burst. gRPC's threads and the loop free what a burst
// of calls (or of oversized requests gRPC refused) allocated, but glibc keeps the freed pages in
// its arenas, so the plugin's RSS would stay at the burst's peak. Every `period` the loop queues
// one check on libuv's worker pool: when the RSS grew by more than `slack` since the last trim,
// malloc_trim(0) returns the free pages. Nothing runs on the loop but the timer and the queueing.
// Construct, Start() and Stop() on the loop thread; the check runs on a worker thread.
class MemoryTrim {
 public:
  MemoryTrim(uv_loop_t* loop, std::chrono::milliseconds period, size_t slack);
  MemoryTrim(const MemoryTrim&) = delete;
  MemoryTrim& operator=(const MemoryTrim&) = delete;

  // Starts the timer (its handle is made here, so an unstarted MemoryTrim holds none).
  void Start();
  // Closes the timer; a check already queued still finishes (the loop runs until it has).
  void Stop();
  // One check and, when the RSS grew by more than the slack, one trim; returns whether it
  // trimmed. Any thread (the worker pool; tests call it directly).
  bool CheckAndTrim();
  uint64_t trims() const { return trims_.load(); }

 private:
  static void OnTimer(uv_timer_t* timer);

  uv_loop_t* loop_;
  uv_timer_t timer_{};
  uv_work_t work_{};
  bool started_ = false;      // loop thread only
  bool work_queued_ = false;  // loop thread only
  std::chrono::milliseconds period_;
  size_t slack_;
  std::atomic<size_t> baseline_{0};
  std::atomic<uint64_t> trims_{0};
};

// The endpoint's address from the settings (--metrics-address); `write_health` (may be
// null) is what /healthz reads of the state database.
metrics::MetricsServerOptions MetricsOptionsFromSettings(const Settings& settings,
                                                         const metrics::WriteHealth* write_health);

// The plugin's Prometheus endpoint: the metrics server on its own thread, and the loop timer that
// beats the heartbeat /healthz reads (once a second). Construct, Start() and Stop() on the loop
// thread; a scrape never runs on it.
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
