// Waits for the block device of an attached disk to appear in sysfs: a scan on a worker thread,
// then, while none is found, another scan after a backoff delay on a Clock timer (50 ms doubling
// to 1 s) until the deadline (on the same Clock). No worker thread is held while waiting.
// Loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "loop/clock.h"
#include "node/device_finder.h"
#include "util/status.h"

namespace oxide::engine {

class DeviceWaiter {
 public:
  using Done = std::function<void(StatusOr<node::BlockDevice>)>;

  // Scans run on `loop`'s worker pool; delays and the deadline are on `clock`.
  DeviceWaiter(uv_loop_t* loop, Clock* clock, std::string sysfs_root, std::chrono::seconds max_wait)
      : loop_(loop), clock_(clock), sysfs_root_(std::move(sysfs_root)), max_wait_(max_wait) {}
  // On a LoopClock of its own. For callers not yet handed a Clock (the node service, whose
  // constructor does not take one yet).
  DeviceWaiter(uv_loop_t* loop, std::string sysfs_root, std::chrono::seconds max_wait)
      : own_clock_(std::make_unique<LoopClock>(loop)),
        loop_(loop),
        clock_(own_clock_.get()),
        sysfs_root_(std::move(sysfs_root)),
        max_wait_(max_wait) {}
  ~DeviceWaiter() { CancelAll(); }
  DeviceWaiter(const DeviceWaiter&) = delete;
  DeviceWaiter& operator=(const DeviceWaiter&) = delete;

  // `done` gets the device, NOT_FOUND after the wait, or FAILED_PRECONDITION (ambiguous, not a
  // block device) at once.
  void Wait(const std::string& serial, Done done);
  // Ends every wait with UNAVAILABLE (shutdown).
  void CancelAll();

 private:
  struct Pending;
  void Scan(Pending* pending);
  void Finish(Pending* pending, StatusOr<node::BlockDevice> result);

  std::unique_ptr<LoopClock> own_clock_;  // declared first: destroyed after every use of it
  uv_loop_t* loop_;
  Clock* clock_;
  std::string sysfs_root_;
  std::chrono::seconds max_wait_;
  std::set<Pending*> pending_;
  bool cancelled_ = false;
};

}  // namespace oxide::engine
