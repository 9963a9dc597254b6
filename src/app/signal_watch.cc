#include "app/signal_watch.h"

#include <csignal>
#include <cstdlib>
#include <string>
#include <utility>

#include "util/log.h"

namespace oxide {

SignalWatch::SignalWatch(EventLoop* loop, std::function<void()> on_signal)
    : on_signal_(std::move(on_signal)) {
  for (uv_signal_t* handle : {&term_, &interrupt_}) {
    uv_signal_init(loop->uv(), handle);
    handle->data = this;
  }
  uv_signal_start(&term_, &SignalWatch::OnSignal, SIGTERM);
  uv_signal_start(&interrupt_, &SignalWatch::OnSignal, SIGINT);
}

void SignalWatch::Close() {
  for (uv_signal_t* handle : {&term_, &interrupt_}) {
    uv_close(reinterpret_cast<uv_handle_t*>(handle), nullptr);
  }
}

void SignalWatch::OnSignal(uv_signal_t* handle, int signum) {
  auto* self = static_cast<SignalWatch*>(handle->data);
  if (self->received_) {
    log::Warn("second signal during shutdown: exiting now", {{"signal", std::to_string(signum)}});
    std::_Exit(1);
  }
  self->received_ = true;
  log::Info("signal received: shutting down",
            {{"signal", signum == SIGTERM ? "SIGTERM" : "SIGINT"}});
  self->on_signal_();
}

}  // namespace oxide
