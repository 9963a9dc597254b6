// SHA-256 (FIPS 180-4), for deriving stable, collision-resistant names. Pure function: any thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace oxide {

std::array<uint8_t, 32> Sha256(std::string_view data);
// Lowercase hex of the digest (64 characters).
std::string Sha256Hex(std::string_view data);

}  // namespace oxide
