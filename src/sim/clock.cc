#include "clock.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace oxide_sim {
namespace {

std::atomic<long long> wall_offset_ms{0};

}  // namespace

void set_wall_offset_ms(long long offset_ms) {
  wall_offset_ms.store(offset_ms, std::memory_order_relaxed);
}

std::string now_rfc3339() {
  const auto now = std::chrono::system_clock::now() +
                   std::chrono::milliseconds(wall_offset_ms.load(std::memory_order_relaxed));
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(micros % 1000000));
  return buffer;
}

long long monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace oxide_sim
