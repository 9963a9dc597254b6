#include "timeline.h"

namespace oxide_sim {

void Timeline::run(uint64_t delay_ms, ResourceKey key, std::function<void()> step) {
  if (delay_ms == 0 && !frozen_(key)) {
    step();
    return;
  }
  if (delay_ms == 0) {
    parked_.push_back(Parked{std::move(key), std::move(step)});
    return;
  }
  auto* pending = new Pending;
  pending->owner = this;
  pending->key = std::move(key);
  pending->step = std::move(step);
  pending->timer.data = pending;
  uv_timer_init(loop_, &pending->timer);
  timers_.insert(pending);
  uv_timer_start(
      &pending->timer,
      [](uv_timer_t* timer) {
        auto* fired = static_cast<Pending*>(timer->data);
        fired->owner->fire(fired);
      },
      delay_ms, 0);
}

void Timeline::fire(Pending* pending) {
  timers_.erase(pending);
  ResourceKey key = std::move(pending->key);
  std::function<void()> step = std::move(pending->step);
  uv_close(reinterpret_cast<uv_handle_t*>(&pending->timer),
           [](uv_handle_t* handle) { delete static_cast<Pending*>(handle->data); });
  if (frozen_(key)) {
    parked_.push_back(Parked{std::move(key), std::move(step)});
    return;
  }
  step();
}

void Timeline::release_unfrozen() {
  std::list<Parked> ready;
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (!frozen_(it->key)) {
      ready.splice(ready.end(), parked_, it++);
    } else {
      ++it;
    }
  }
  for (auto& item : ready)
    item.step();
}

void Timeline::force(const std::string& kind, const std::string& id) {
  std::list<Parked> ready;
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (it->key.kind == kind && it->key.id == id) {
      ready.splice(ready.end(), parked_, it++);
    } else {
      ++it;
    }
  }
  for (auto& item : ready)
    item.step();
}

void Timeline::run_all_now() {
  std::list<Parked> ready;
  for (Pending* pending : timers_) {
    uv_timer_stop(&pending->timer);
    ready.push_back(Parked{std::move(pending->key), std::move(pending->step)});
    uv_close(reinterpret_cast<uv_handle_t*>(&pending->timer),
             [](uv_handle_t* handle) { delete static_cast<Pending*>(handle->data); });
  }
  timers_.clear();
  ready.splice(ready.end(), parked_);
  for (auto& item : ready)
    item.step();
}

void Timeline::shutdown() {
  for (Pending* pending : timers_) {
    uv_timer_stop(&pending->timer);
    pending->step = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&pending->timer),
             [](uv_handle_t* handle) { delete static_cast<Pending*>(handle->data); });
  }
  timers_.clear();
  parked_.clear();
}

}  // namespace oxide_sim
