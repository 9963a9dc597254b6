// Waits for the block device of an attached disk to appear (NodeOs::FindDevice): a scan on a
// worker thread, then, while none is found, another scan after a backoff delay on a Clock timer
// (50 ms doubling to 1 s) until the deadline (on the same Clock). No worker thread is held while
// waiting. Loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "loop/clock.h"
#include "loop/loop_affinity.h"
#include "node/node_os.h"
#include "util/status.h"

namespace oxide::engine {

class DeviceWaiter {
 public:
  using Done = std::function<void(StatusOr<node::BlockDevice>)>;

  // Scans run on `loop`'s worker pool through `os`; delays and the deadline are on `clock`.
  // `clock` and `os` outlive the waiter.
  DeviceWaiter(uv_loop_t* loop, Clock* clock, node::NodeOs* os, std::chrono::seconds max_wait)
      : loop_(loop), clock_(clock), os_(os), max_wait_(max_wait) {}
  // Ends the waits still pending, like CancelAll() (unchecked: it may run off the loop thread
  // once the loop has stopped).
  ~DeviceWaiter() { CancelPending(); }
  DeviceWaiter(const DeviceWaiter&) = delete;
  DeviceWaiter& operator=(const DeviceWaiter&) = delete;

  // `done` gets the device, NOT_FOUND after the wait, or FAILED_PRECONDITION (ambiguous, not a
  // block device) at once.
  void Wait(const std::string& serial, Done done);
  // Ends every wait with UNAVAILABLE (shutdown).
  void CancelAll();

 private:
  struct Pending;
  void CancelPending();
  void Scan(Pending* pending);
  void Finish(Pending* pending, StatusOr<node::BlockDevice> result);

  uv_loop_t* loop_;
  Clock* clock_;
  node::NodeOs* os_;
  std::chrono::seconds max_wait_;
  std::set<Pending*> pending_;
  bool cancelled_ = false;
  LoopAffinity affinity_;
};

}  // namespace oxide::engine
