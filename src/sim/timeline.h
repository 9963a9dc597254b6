// Runs deferred model transitions ("the rest of the saga") on libuv timers. A transition
// whose resource is frozen is parked until the resource is released or faulted.
// Event-loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <list>
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
  ~Timeline() { shutdown(); }
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Runs `step` after delay_ms. With no delay and no freeze it runs before returning.
  void run(uint64_t delay_ms, ResourceKey key, std::function<void()> step);
  // Runs the parked steps whose resource is no longer frozen.
  void release_unfrozen();
  // Runs the parked steps of this resource even if still frozen (used by "fault").
  void force(const std::string& kind, const std::string& id);
  size_t pending_count() const { return timers_.size() + parked_.size(); }
  // Runs every pending and parked step now, frozen or not (used by reset, after the state
  // was wiped, so waiting requests get their answer instead of hanging).
  void run_all_now();
  // Drops everything (timers are closed; steps never run).
  void shutdown();

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
  void fire(Pending* pending);

  uv_loop_t* loop_;
  FrozenCheck frozen_;
  std::set<Pending*> timers_;
  std::list<Parked> parked_;
};

}  // namespace oxide_sim
