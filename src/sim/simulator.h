// The whole simulator: owns the state, the HTTP server, timers, faults and guest devices,
// and routes each request through auth/faults/handlers. Everything runs on the thread
// that runs the uv loop given to the constructor.
#pragma once

#include <uv.h>

#include <memory>
#include <string>

#include "api_context.h"
#include "control_api.h"
#include "faults.h"
#include "guest_devices.h"
#include "http_server.h"
#include "model.h"
#include "options.h"
#include "persistence.h"
#include "request_log.h"
#include "timeline.h"

namespace oxide_sim {

class Simulator {
 public:
  Simulator(uv_loop_t* loop, SimOptions options);
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Opens the state, recovers interrupted transitions, applies seeds, starts serving.
  bool start(std::string* error);
  uint16_t port() const { return server_.port(); }
  // Stops serving, releases every loop device, drops pending timers.
  void stop();

 private:
  void Handle(HttpRequest&& request, Responder responder);
  void HandleApi(HttpRequest&& request, Responder responder, std::vector<std::string> segments);
  bool apply_seeds(std::string* error);
  void recover_transitions();
  void reset();

  uv_loop_t* loop_;
  SimOptions options_;
  Persistence store_;
  Model model_;
  Timeline timeline_;
  GuestDevices guest_;
  AuthConfig auth_;
  Services services_;
  Faults faults_;
  RequestLog log_;
  ControlContext control_;
  HttpServer server_;
};

}  // namespace oxide_sim
