// Measures how long each turn of the event loop keeps the loop thread busy — the time between two
// waits for I/O, minus the wait — so that a stall (blocking work on the loop) shows: a warning
// when one turn is busy longer than `warn_after` (at most one a minute), and a summary record
// (turns, histogram, longest) when it stops. A signal that interrupts the wait makes libuv lose
// that wait from its idle time (seen with libuv 1.44), so a turn with a signal is counted apart,
// unmeasured: SIGCHLD (uv_spawn's children) is watched here, other signals the owner handles are
// reported with SignalArrived(). Each turn's CPU time (the loop thread's own clock) is kept too:
// on a busy machine a turn's wall time includes the time the kernel ran other threads, and only
// the CPU time says how much work the turn itself held the loop for. Loop thread only.
#pragma once

#include <uv.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace oxide {

class TurnMonitor {
 public:
  // Upper bounds of the histogram's buckets, in microseconds; the last bucket is open.
  static constexpr std::array<uint64_t, 9> kBucketBoundsUs = {50,   100,  250,   500,  1000,
                                                              2000, 5000, 10000, 50000};
  static constexpr size_t kBuckets = kBucketBoundsUs.size() + 1;

  struct Summary {
    uint64_t turns = 0;
    uint64_t unmeasured = 0;  // turns with a signal
    uint64_t over_1ms = 0;
    std::chrono::nanoseconds busy{0};
    std::chrono::nanoseconds longest{0};
    std::chrono::nanoseconds longest_cpu{0};  // the most CPU time one turn used
    uint64_t over_1ms_cpu = 0;
    std::array<uint64_t, kBuckets> histogram{};
    // The bucket bound below which 99 % of the turns ended (µs); 0 without turns, UINT64_MAX
    // when the last, open bucket holds it.
    uint64_t p99_at_most_us() const;
    std::string HistogramText() const;  // "<=50us:N <=100us:N ... >50000us:N"
  };

  explicit TurnMonitor(uv_loop_t* loop,
                       std::chrono::milliseconds warn_after = std::chrono::milliseconds(100));
  // Closes the handle if Stop() was not called (the loop must run once more).
  ~TurnMonitor();
  TurnMonitor(const TurnMonitor&) = delete;
  TurnMonitor& operator=(const TurnMonitor&) = delete;

  void Start();
  // The current turn handled a signal (call from the signal's callback).
  void SignalArrived() { signalled_ = true; }
  // Logs the summary ("event loop turns") and closes the handle.
  void Stop();
  const Summary& summary() const { return summary_; }

 private:
  static void OnPrepare(uv_prepare_t* handle);
  void Record(std::chrono::nanoseconds busy, std::chrono::nanoseconds cpu);

  uv_loop_t* loop_;
  std::chrono::milliseconds warn_after_;
  void CloseHandles();

  uv_prepare_t* prepare_;  // heap: freed by its close callback, which may run after us
  uv_signal_t* child_;     // likewise
  bool started_ = false;
  bool signalled_ = false;
  bool has_last_ = false;
  uint64_t last_now_ns_ = 0;
  uint64_t last_idle_ns_ = 0;
  uint64_t last_cpu_ns_ = 0;
  uint64_t last_warning_ms_ = 0;
  bool warned_ = false;
  uint64_t stalls_since_warning_ = 0;
  Summary summary_;
};

}  // namespace oxide
