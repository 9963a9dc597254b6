#include "timeline.h"

namespace oxide_sim {

void Timeline::Run(uint64_t delay_ms, ResourceKey key, std::function<void()> step) {
  if (delay_ms == 0 && !frozen_(key)) {
    step();
    return;
  }
  if (delay_ms == 0) {
    parked_.push_back(Parked{std::move(key), std::move(step)});
    return;
  }
  if (manual_clock_) {
    scheduled_.emplace(manual_now_ms_ + delay_ms, Parked{std::move(key), std::move(step)});
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
        fired->owner->Fire(fired);
      },
      delay_ms, 0);
}

void Timeline::Fire(Pending* pending) {
  timers_.erase(pending);
  ResourceKey key = std::move(pending->key);
  std::function<void()> step = std::move(pending->step);
  uv_close(reinterpret_cast<uv_handle_t*>(&pending->timer),
           [](uv_handle_t* handle) { delete static_cast<Pending*>(handle->data); });
  Due(std::move(key), std::move(step));
}

void Timeline::Due(ResourceKey key, std::function<void()> step) {
  if (frozen_(key)) {
    parked_.push_back(Parked{std::move(key), std::move(step)});
    return;
  }
  step();
}

size_t Timeline::AdvanceManualClock(uint64_t ms) {
  manual_now_ms_ += ms;
  size_t count = 0;
  // One at a time: a step may schedule further steps (due later than now, as delays are > 0).
  while (!scheduled_.empty() && scheduled_.begin()->first <= manual_now_ms_) {
    Parked item = std::move(scheduled_.begin()->second);
    scheduled_.erase(scheduled_.begin());
    ++count;
    Due(std::move(item.key), std::move(item.step));
  }
  return count;
}

void Timeline::ReleaseUnfrozen() {
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

void Timeline::Force(const std::string& kind, const std::string& id) {
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

void Timeline::RunAllNow() {
  std::list<Parked> ready;
  for (Pending* pending : timers_) {
    uv_timer_stop(&pending->timer);
    ready.push_back(Parked{std::move(pending->key), std::move(pending->step)});
    uv_close(reinterpret_cast<uv_handle_t*>(&pending->timer),
             [](uv_handle_t* handle) { delete static_cast<Pending*>(handle->data); });
  }
  timers_.clear();
  for (auto& [due, item] : scheduled_)
    ready.push_back(std::move(item));
  scheduled_.clear();
  ready.splice(ready.end(), parked_);
  for (auto& item : ready)
    item.step();
}

void Timeline::Shutdown() {
  for (Pending* pending : timers_) {
    uv_timer_stop(&pending->timer);
    pending->step = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&pending->timer),
             [](uv_handle_t* handle) { delete static_cast<Pending*>(handle->data); });
  }
  timers_.clear();
  scheduled_.clear();
  parked_.clear();
}

}  // namespace oxide_sim
