// The serving plugin's watch on SIGTERM and SIGINT: the first starts a graceful shutdown (the
// callback), a second one during it exits at once. Loop thread only (the callback runs there).
#pragma once

#include <uv.h>

#include <functional>

#include "loop/event_loop.h"

namespace oxide {

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

}  // namespace oxide
