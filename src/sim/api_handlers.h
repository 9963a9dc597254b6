// The Oxide API operations, keyed by OpenAPI operationId. Each handler runs its extractors,
// then auth, then the logic, and answers through call->reply (possibly later, from the
// timeline). Handlers throw ApiError for immediate errors. Event-loop thread only.
#pragma once

#include <map>
#include <string>

#include "api_context.h"

namespace oxide_sim {

using ApiHandler = void (*)(Services&, const CallPtr&);

const std::map<std::string, ApiHandler>& api_handlers();

// Per-area registries merged by api_handlers().
void register_misc_handlers(std::map<std::string, ApiHandler>& table);
void register_disk_handlers(std::map<std::string, ApiHandler>& table);
void register_snapshot_handlers(std::map<std::string, ApiHandler>& table);
void register_instance_handlers(std::map<std::string, ApiHandler>& table);
void register_attach_handlers(std::map<std::string, ApiHandler>& table);

}  // namespace oxide_sim
