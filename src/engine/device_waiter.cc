#include "engine/device_waiter.h"

#include <algorithm>

#include "engine/blocking_work.h"

namespace oxide::engine {

struct DeviceWaiter::Pending {
  DeviceWaiter* owner;
  std::string serial;
  Done done;
  std::chrono::steady_clock::time_point deadline;
  std::chrono::milliseconds delay{50};
  uv_timer_t* timer = nullptr;  // freed in its close callback
  bool scanning = false;
  bool finished = false;
};

void DeviceWaiter::Wait(const std::string& serial, Done done) {
  if (cancelled_) {
    done(Unavailable("the plugin is shutting down; retry the call"));
    return;
  }
  auto* pending =
      new Pending{this, serial, std::move(done), std::chrono::steady_clock::now() + max_wait_};
  pending->timer = new uv_timer_t;
  uv_timer_init(loop_, pending->timer);
  pending->timer->data = pending;
  pending_.insert(pending);
  Scan(pending);
}

void DeviceWaiter::Scan(Pending* pending) {
  pending->scanning = true;
  RunBlocking(
      loop_, [os = os_, serial = pending->serial] { return os->FindDevice(serial); },
      [pending](StatusOr<node::BlockDevice> result) {
        pending->scanning = false;
        DeviceWaiter* self = pending->owner;
        if (pending->finished) {  // cancelled while scanning
          delete pending;
          return;
        }
        bool keep_waiting = !result.ok() && result.status().code() == StatusCode::kNotFound &&
                            std::chrono::steady_clock::now() + pending->delay < pending->deadline;
        if (!keep_waiting) {
          if (!result.ok() && result.status().code() == StatusCode::kNotFound) {
            result = NotFound(result.status().message() + "; waited " +
                              std::to_string(self->max_wait_.count()) + " s");
          }
          self->Finish(pending, std::move(result));
          return;
        }
        uv_timer_start(
            pending->timer,
            [](uv_timer_t* timer) {
              auto* waiting = static_cast<Pending*>(timer->data);
              waiting->owner->Scan(waiting);
            },
            static_cast<uint64_t>(pending->delay.count()), 0);
        pending->delay = std::min(pending->delay * 2, std::chrono::milliseconds(1000));
      });
}

void DeviceWaiter::Finish(Pending* pending, StatusOr<node::BlockDevice> result) {
  pending->finished = true;
  pending_.erase(pending);
  uv_timer_stop(pending->timer);
  uv_close(reinterpret_cast<uv_handle_t*>(pending->timer),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_timer_t*>(handle); });
  Done done = std::move(pending->done);
  if (!pending->scanning) delete pending;  // else the scan's callback deletes it
  done(std::move(result));
}

void DeviceWaiter::CancelAll() {
  cancelled_ = true;
  while (!pending_.empty()) {
    Finish(*pending_.begin(), Unavailable("the plugin is shutting down; retry the call"));
  }
}

}  // namespace oxide::engine
