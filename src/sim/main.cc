// oxide-sim entry point: parse flags, run the simulator on one libuv loop until SIGINT or
// SIGTERM, then release every loop device and exit.
#include <uv.h>

#include <csignal>
#include <cstdio>

#include "options.h"
#include "simulator.h"

namespace {

struct SignalContext {
  oxide_sim::Simulator* simulator = nullptr;
  uv_signal_t interrupt{};
  uv_signal_t terminate{};
};

void on_signal(uv_signal_t* handle, int) {
  auto* context = static_cast<SignalContext*>(handle->data);
  context->simulator->stop();
  uv_signal_stop(&context->interrupt);
  uv_signal_stop(&context->terminate);
  uv_close(reinterpret_cast<uv_handle_t*>(&context->interrupt), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&context->terminate), nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  oxide_sim::SimOptions options;
  switch (oxide_sim::parse_options(argc, argv, &options)) {
    case oxide_sim::ParseOutcome::kExitOk:
      return 0;
    case oxide_sim::ParseOutcome::kExitError:
      return 2;
    case oxide_sim::ParseOutcome::kRun:
      break;
  }
  uv_loop_t* loop = uv_default_loop();
  oxide_sim::Simulator simulator(loop, options);
  // Handlers first, so a SIGTERM right after the port line still cleans up.
  SignalContext signals;
  signals.simulator = &simulator;
  signals.interrupt.data = &signals;
  signals.terminate.data = &signals;
  uv_signal_init(loop, &signals.interrupt);
  uv_signal_init(loop, &signals.terminate);
  uv_signal_start(&signals.interrupt, &on_signal, SIGINT);
  uv_signal_start(&signals.terminate, &on_signal, SIGTERM);
  std::string error;
  if (!simulator.start(&error)) {
    std::fprintf(stderr, "oxide-sim: %s\n", error.c_str());
    simulator.stop();
    return 1;
  }
  std::printf("%u\n", static_cast<unsigned>(simulator.port()));
  std::fflush(stdout);
  std::fprintf(stderr, "oxide-sim: listening on %s://127.0.0.1:%u\n",
               options.tls_cert_file.empty() ? "http" : "https",
               static_cast<unsigned>(simulator.port()));

  uv_run(loop, UV_RUN_DEFAULT);
  // Latency timers of dropped requests may still be open: close whatever remains.
  uv_walk(
      loop,
      [](uv_handle_t* handle, void*) {
        if (!uv_is_closing(handle)) uv_close(handle, nullptr);
      },
      nullptr);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_loop_close(loop);
  std::fprintf(stderr, "oxide-sim: stopped\n");
  return 0;
}
