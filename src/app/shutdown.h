// How the serving plugin stops: SignalWatch, its watch on SIGTERM and SIGINT (the first starts a
// graceful shutdown, a second one during it exits at once), and OperationDrain, the last step of
// that shutdown (once the server no longer takes calls, the wait for the engines' operations still
// in flight). The process assembly (plugin.cc) runs both, in that order. Loop thread only (the
// callbacks run there).
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/operation_tracker.h"
#include "loop/clock.h"
#include "loop/event_loop.h"

namespace oxide {

// The watch on SIGTERM and SIGINT: the first starts a graceful shutdown (the callback), a second
// one during it exits at once.
class SignalWatch {
 public:
  // Watches from now on; `loop` outlives this object.
  SignalWatch(EventLoop* loop, std::function<void()> on_signal);
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // Closes the handles (their close callbacks run on a later turn: keep this object until then).
  void Close();

 private:
  static void OnSignal(uv_signal_t* handle, int signum);

  std::function<void()> on_signal_;
  uv_signal_t term_{};
  uv_signal_t interrupt_{};
  bool received_ = false;
};

// The last step of a graceful shutdown: once the server no longer takes calls, waits for the
// engines' operations still in flight (they outlive their RPCs: a create whose caller gave up, a
// snapshot answered ready_to_use=false, a recovery, a clone's temporary snapshot being dropped)
// until none is left or the shutdown's deadline comes, then reports which were left. Event-driven:
// each engine's tracker calls back when it drains; one Clock timer stands for the deadline. The
// engines outlive the drain.
class OperationDrain {
 public:
  // `sources`: a name for the log ("volume", "snapshot", "node") and the operations.
  using Source = std::pair<std::string, engine::OperationsInFlight*>;
  // What was still in flight when the deadline came: one "<source>: <operation>" line each.
  using Done = std::function<void(std::vector<std::string> left)>;

  OperationDrain(Clock* clock, std::vector<Source> sources);
  ~OperationDrain();
  OperationDrain(const OperationDrain&) = delete;
  OperationDrain& operator=(const OperationDrain&) = delete;

  // Calls `done` once: with nothing when every source is idle (at once if none is busy), else at
  // `deadline` with what is left. Logs what it waits for, and the outcome. `done` is called from
  // inside an engine's callback or a timer: it must not destroy an engine synchronously.
  void Start(Clock::TimePoint deadline, Done done);

  size_t in_flight() const;

 private:
  // Registers for the next drain of every busy source; finishes when none is busy.
  void Check();
  void Finish(std::vector<std::string> left);
  std::vector<std::string> Left() const;

  Clock* clock_;
  std::vector<Source> sources_;
  Done done_;
  Clock::TimerId deadline_timer_ = 0;
  bool finished_ = false;
  Clock::TimePoint started_{};
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace oxide
