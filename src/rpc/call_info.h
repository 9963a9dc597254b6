// What a handler knows about the call it serves, besides the request: the RPC's name, a request
// id for the logs, when it started and its deadline. Loop thread only.
#pragma once

#include <chrono>
#include <string>

namespace oxide::rpc {

struct CallInfo {
  const char* method = "";
  std::string request_id;
  std::chrono::steady_clock::time_point started;
  // The CO's deadline for this call, or time_point::max() when it set none.
  std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
};

}  // namespace oxide::rpc
