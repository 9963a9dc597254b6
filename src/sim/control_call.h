// What a handler of a control API endpoint gets (ControlContext, ControlCall; control_api.cc's
// routing table names the handlers), and the helpers the handlers share: JSON replies, required
// strings, names, run states, the instance view. A handler may throw std::invalid_argument (400) or
// std::out_of_range (404); handle_control turns the throw into the reply.
// Event-loop thread only.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api_context.h"
#include "faults.h"
#include "request_log.h"

namespace oxide_sim {

// What the control API works on: the simulator's parts it reads and changes.
struct ControlContext {
  Services& services;
  Faults& faults;
  RequestLog& log;
  AuthConfig& auth;             // the accepted tokens (Services holds them read-only)
  std::function<void()> reset;  // wipes all state and re-applies the start-up seed
};

// One control request as a handler sees it: the method, the decoded path segments ("__sim",
// the endpoint, ...) and the body (a JSON object; {} when the request had none).
struct ControlCall {
  ControlContext& context;
  const std::string& method;
  const std::vector<std::string>& segments;
  const nlohmann::json& body;
};
using ControlHandler = HttpResponse (*)(const ControlCall& call);

// Replies.
HttpResponse control_json(int status, const nlohmann::json& body);
HttpResponse ordered_control_json(int status, const nlohmann::ordered_json& body);
HttpResponse control_error(int status, const std::string& message);

// Checks shared by the handlers; each throws std::invalid_argument naming the problem.
std::string require_string(const nlohmann::json& body, const char* key);
void check_name(const std::string& name);
void check_run_state(const std::string& state);

// An instance as the API shows it, plus guest_local, guest_sysfs_root and guest_device_order.
nlohmann::ordered_json instance_view(const Instance& instance);
// The instance a control path names by id or name; nullptr when there is none.
Instance* find_instance(Model& model, const std::string& selector);

}  // namespace oxide_sim
