// The simulator's own control API under /__sim/ (no Oxide auth): instances, timing,
// freeze/release/fault, fault injection, accepted tokens, request log, state dump, reset. See
// README.md.
// Event-loop thread only.
#pragma once

#include <string>
#include <vector>

#include "control_call.h"

namespace oxide_sim {

// Handles one /__sim/... request; `segments` are the decoded path segments.
HttpResponse handle_control(ControlContext& context, const HttpRequest& request,
                            const std::vector<std::string>& segments, const QueryPairs& query);

// Creates an instance from a control/seed description. Throws std::invalid_argument.
Instance create_sim_instance(Services& services, const nlohmann::json& spec);
// Creates a project if no project has that name; returns it.
Project ensure_project(Model& model, const std::string& name, const std::string& description);

}  // namespace oxide_sim
