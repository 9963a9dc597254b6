// The simulator's own control API under /__sim/ (no Oxide auth): instances, timing,
// freeze/release/fault, fault injection, accepted tokens, request log, state dump, reset. See
// README.md.
// Event-loop thread only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api_context.h"
#include "faults.h"
#include "request_log.h"

namespace oxide_sim {

struct ControlContext {
  Services& services;
  Faults& faults;
  RequestLog& log;
  AuthConfig& auth;             // the accepted tokens (Services holds them read-only)
  std::function<void()> reset;  // wipes all state and re-applies the start-up seed
};

// Handles one /__sim/... request; `segments` are the decoded path segments.
HttpResponse handle_control(ControlContext& context, const HttpRequest& request,
                            const std::vector<std::string>& segments, const QueryPairs& query);

// Creates an instance from a control/seed description. Throws std::invalid_argument.
Instance create_sim_instance(Services& services, const nlohmann::json& spec);
// Creates a project if no project has that name; returns it.
Project ensure_project(Model& model, const std::string& name, const std::string& description);

}  // namespace oxide_sim
