// The Oxide API operations, keyed by OpenAPI operationId. Each handler runs its extractors,
// then auth, then the logic, and answers through call->reply (possibly later, from the
// timeline). Event-loop thread only.
//
// The contract with the dispatcher (dispatch.cc): a handler returns an ApiStatus. An error
// means "nothing was replied; answer with this error"; Ok means the handler replied or handed
// the reply to a timeline step. Handlers do not throw: request parsing (extractors, bodies,
// page requests) and the handlers' own checks return their errors. The model and rules layer
// they call (model.cc selectors, disk_rules.cc, instance_lifecycle.cc) still throws ApiError;
// every handler is registered through CatchModelErrors (model_errors.h), the one place that
// turns such a throw into the returned ApiStatus, so the dispatcher sees values only.
#pragma once

#include <map>
#include <string>

#include "api_context.h"
#include "api_result.h"

namespace oxide_sim {

using ApiHandler = ApiStatus (*)(Services&, const CallPtr&);

const std::map<std::string, ApiHandler>& ApiHandlers();

// Per-area registries merged by ApiHandlers().
void RegisterMiscHandlers(std::map<std::string, ApiHandler>& table);
void RegisterDiskHandlers(std::map<std::string, ApiHandler>& table);
void RegisterSnapshotHandlers(std::map<std::string, ApiHandler>& table);
void RegisterInstanceHandlers(std::map<std::string, ApiHandler>& table);
void RegisterAttachHandlers(std::map<std::string, ApiHandler>& table);

}  // namespace oxide_sim
