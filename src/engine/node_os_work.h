// How the node's OS work runs without blocking the loop thread:
//  - RunBlocking runs blocking work (mkfs, mount, sysfs reads) on a libuv worker thread and hands
//    its result back to the loop thread; `work` runs on a worker thread and must touch nothing the
//    loop owns; `done` runs on the loop thread.
//  - FormatGate bounds how many mkfs run at once on this node (--max-concurrent-formats): mkfs of
//    a large disk takes memory, and several at once have taken node plugins down elsewhere. A
//    format waits its turn on the loop, holding no worker thread.
//  - DeviceWaiter waits for the block device of an attached disk to appear (NodeOs::FindDevice): a
//    scan on a worker thread, then, while none is found, another scan after a backoff delay on a
//    Clock timer (50 ms doubling to 1 s) until the deadline (on the same Clock). No worker thread
//    is held while waiting.
// Loop thread only (RunBlocking's `work` excepted, as said above).
#pragma once

#include <uv.h>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>

#include "loop/clock.h"
#include "loop/loop_affinity.h"
#include "node/node_os.h"
#include "util/status.h"

namespace oxide::engine {

// ---- RunBlocking ----

// `work()` returns a Status or a StatusOr<T> (the Result); `done(Result)` gets it. When the work
// is cancelled (loop closing) or cannot be queued, `done` gets an error Status instead. Both
// callables may be move-only (a Reply is).
template <typename Work, typename Done>
void RunBlocking(uv_loop_t* loop, Work work, Done done) {
  using Result = std::invoke_result_t<Work&>;
  struct Job {
    uv_work_t request{};
    Work work;
    Done done;
    std::optional<Result> result;
  };
  auto* job = new Job{{}, std::move(work), std::move(done), std::nullopt};
  job->request.data = job;
  int rc = uv_queue_work(
      loop, &job->request,
      [](uv_work_t* request) {
        auto* self = static_cast<Job*>(request->data);
        self->result.emplace(self->work());
      },
      [](uv_work_t* request, int) {
        std::unique_ptr<Job> self(static_cast<Job*>(request->data));
        if (self->result) {
          self->done(std::move(*self->result));
        } else {
          self->done(Result(Unavailable("the plugin is shutting down; retry the call")));
        }
      });
  if (rc != 0) {
    std::unique_ptr<Job> self(job);
    self->done(Result(Internal(std::string("cannot queue work: ") + uv_strerror(rc))));
  }
}

// ---- FormatGate ----

class FormatGate {
 public:
  explicit FormatGate(int limit) : limit_(limit < 1 ? 1 : limit) {}

  // Runs `start` now when fewer than the limit are running, otherwise once one ends. Whoever
  // `start` begins must call Leave() exactly once when its format has ended.
  void Enter(std::function<void()> start) {
    if (running_ < limit_) {
      ++running_;
      return start();
    }
    waiting_.push_back(std::move(start));
  }
  void Leave() {
    if (waiting_.empty()) {
      --running_;
      return;
    }
    std::function<void()> next = std::move(waiting_.front());
    waiting_.pop_front();
    next();
  }
  int running() const { return running_; }
  bool full() const { return running_ >= limit_; }

 private:
  const int limit_;
  int running_ = 0;
  std::deque<std::function<void()>> waiting_;
};

// ---- DeviceWaiter ----

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
