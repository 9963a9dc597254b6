// UUID helpers for the simulator: random v4 generation and strict parsing.
// Event-loop thread only (the generator is not synchronised).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace oxide_sim {

// A fresh random lowercase hyphenated UUIDv4.
std::string new_uuid();

// True if `text` is a UUID in the 8-4-4-4-12 hex form (any case).
bool is_uuid(std::string_view text);

// Canonical lowercase hyphenated form if `text` parses as a UUID the way the uuid crate's
// parse_str does (hyphenated or 32-hex "simple" form); nullopt otherwise.
std::optional<std::string> parse_uuid(std::string_view text);

// Lowercase form of a UUID accepted by is_uuid().
std::string canonical_uuid(std::string_view text);

// Error text in the style of the uuid crate, for a value that is not a UUID.
std::string uuid_parse_error(std::string_view text);

}  // namespace oxide_sim
