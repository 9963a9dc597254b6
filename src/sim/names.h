// Oxide Name and NameOrId rules with the server's exact failure messages
// (omicron common/src/api/external/mod.rs). Failures are an oxide::Status
// (kInvalidArgument) carrying the server's message; nothing throws. Pure; any thread.
#pragma once

#include <string>

#include "util/status.h"

namespace oxide_sim {

// Ok if `text` is a valid Name, else kInvalidArgument with the server's message.
oxide::Status ValidateName(const std::string& text);

struct NameOrId {
  bool is_id = false;
  std::string value;  // a lowercase UUID, or a valid name
};

// UUID first, else Name. On failure, the Name message.
oxide::StatusOr<NameOrId> ParseNameOrId(const std::string& text);

}  // namespace oxide_sim
