// In-memory log of API requests (not /__sim/ ones) for tests to count calls.
// Event-loop thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>

namespace oxide_sim {

struct LoggedRequest {
  uint64_t seq = 0;
  std::string method, path, query, operation;
  int status = 0;     // 0 when the connection was dropped
  std::string fault;  // "", "500", "503", "429", "drop", "latency"
};

class RequestLog {
 public:
  explicit RequestLog(size_t capacity = 200000) : capacity_(capacity) {}
  void add(LoggedRequest entry);
  void clear() { entries_.clear(); }
  nlohmann::json to_json() const;
  size_t size() const { return entries_.size(); }

 private:
  size_t capacity_;
  uint64_t next_seq_ = 1;
  std::deque<LoggedRequest> entries_;
};

}  // namespace oxide_sim
