// Oxide Name and NameOrId rules with the server's exact failure messages
// (omicron common/src/api/external/mod.rs). Pure; any thread.
#pragma once

#include <optional>
#include <string>

namespace oxide_sim {

// nullopt if `text` is a valid Name, else the server's message.
std::optional<std::string> name_error(const std::string& text);

struct NameOrId {
  bool is_id = false;
  std::string value;  // a lowercase UUID, or a valid name
};

// UUID first, else Name. On failure returns nullopt and sets *error to the Name message.
std::optional<NameOrId> parse_name_or_id(const std::string& text, std::string* error);

}  // namespace oxide_sim
