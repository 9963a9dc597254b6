// Runs deferred model transitions ("the rest of the saga") after a delay. A transition
// whose resource is frozen is parked until the resource is released or faulted.
// The delays count real time on libuv timers, or, with a manual clock (--manual-clock),
// only the time a test advances through AdvanceManualClock (POST /__sim/clock/advance), so a
// test can observe a state during a delay and end the delay deterministically.
// Event-loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace oxide_sim {

struct ResourceKey {
  std::string kind;  // disk | snapshot | instance
  std::string id;
  std::string name;
};

class Timeline {
 public:
  using FrozenCheck = std::function<bool(const ResourceKey&)>;

  Timeline(uv_loop_t* loop, FrozenCheck frozen) : loop_(loop), frozen_(std::move(frozen)) {}
  ~Timeline() { Shutdown(); }
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Runs `step` after delay_ms. With no delay and no freeze it runs before returning.
  void Run(uint64_t delay_ms, ResourceKey key, std::function<void()> step);
  // Runs the parked steps whose resource is no longer frozen.
  void ReleaseUnfrozen();
  // Runs the parked steps of this resource even if still frozen (used by "fault").
  void Force(const std::string& kind, const std::string& id);
  size_t PendingCount() const { return timers_.size() + scheduled_.size() + parked_.size(); }
  // Runs every pending and parked step now, frozen or not (used by reset, after the state
  // was wiped, so waiting requests get their answer instead of hanging).
  void RunAllNow();
  // Drops everything (timers are closed; steps never run).
  void Shutdown();

  // Switches to the manual clock (before anything is scheduled): delays then end only when
  // AdvanceManualClock moves the clock past them.
  void UseManualClock() { manual_clock_ = true; }
  bool manual_clock() const { return manual_clock_; }
  // Milliseconds advanced so far on the manual clock.
  uint64_t manual_now_ms() const { return manual_now_ms_; }
  // Moves the manual clock forward by `ms` and runs, in due order, every step that falls due
  // (a frozen resource's step is parked as with a timer). Returns how many became due.
  size_t AdvanceManualClock(uint64_t ms);

 private:
  struct Pending {
    uv_timer_t timer{};
    Timeline* owner = nullptr;
    ResourceKey key;
    std::function<void()> step;
  };
  struct Parked {
    ResourceKey key;
    std::function<void()> step;
  };
  void Fire(Pending* pending);
  // A step whose delay is over: run it, or park it while its resource is frozen.
  void Due(ResourceKey key, std::function<void()> step);

  uv_loop_t* loop_;
  FrozenCheck frozen_;
  std::set<Pending*> timers_;
  bool manual_clock_ = false;
  uint64_t manual_now_ms_ = 0;
  std::multimap<uint64_t, Parked> scheduled_;  // manual clock: due time -> step
  std::list<Parked> parked_;
};

}  // namespace oxide_sim
