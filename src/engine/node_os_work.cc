#include "engine/node_os_work.h"

#include <algorithm>

namespace oxide::engine {

struct DeviceWaiter::Pending {
  DeviceWaiter* owner;
  std::string serial;
  Done done;
  Clock::TimePoint deadline;
  std::chrono::milliseconds delay{50};
  Clock::TimerId timer = 0;  // the next scan's; 0: none
  bool scanning = false;
  bool finished = false;
};

void DeviceWaiter::Wait(const std::string& serial, Done done) {
  affinity_.Check("DeviceWaiter::Wait");
  if (cancelled_) {
    done(Unavailable("the plugin is shutting down; retry the call"));
    return;
  }
  auto* pending = new Pending{this, serial, std::move(done), clock_->Now() + max_wait_};
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
                            self->clock_->Now() + pending->delay < pending->deadline;
        if (!keep_waiting) {
          if (!result.ok() && result.status().code() == StatusCode::kNotFound) {
            result = NotFound(result.status().message() + "; waited " +
                              std::to_string(self->max_wait_.count()) + " s");
          }
          self->Finish(pending, std::move(result));
          return;
        }
        pending->timer = self->clock_->StartTimer(pending->delay, [pending] {
          pending->timer = 0;
          pending->owner->Scan(pending);
        });
        pending->delay = std::min(pending->delay * 2, std::chrono::milliseconds(1000));
      });
}

void DeviceWaiter::Finish(Pending* pending, StatusOr<node::BlockDevice> result) {
  pending->finished = true;
  pending_.erase(pending);
  clock_->CancelTimer(pending->timer);
  Done done = std::move(pending->done);
  if (!pending->scanning) delete pending;  // else the scan's callback deletes it
  done(std::move(result));
}

void DeviceWaiter::CancelAll() {
  affinity_.Check("DeviceWaiter::CancelAll");
  CancelPending();
}

void DeviceWaiter::CancelPending() {
  cancelled_ = true;
  while (!pending_.empty()) {
    Finish(*pending_.begin(), Unavailable("the plugin is shutting down; retry the call"));
  }
}

}  // namespace oxide::engine
