// URL-safe base64 with padding (RFC 4648 §5), used for page tokens. Any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace oxide_sim {

std::string base64url_encode(std::string_view bytes);

// std::nullopt if `text` is not valid padded URL-safe base64.
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace oxide_sim
