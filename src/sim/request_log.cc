#include "request_log.h"

namespace oxide_sim {

void RequestLog::add(LoggedRequest entry) {
  entry.seq = next_seq_++;
  entries_.push_back(std::move(entry));
  while (entries_.size() > capacity_)
    entries_.pop_front();
}

nlohmann::json RequestLog::to_json() const {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& entry : entries_) {
    items.push_back({{"seq", entry.seq},
                     {"method", entry.method},
                     {"path", entry.path},
                     {"query", entry.query},
                     {"operation", entry.operation},
                     {"status", entry.status},
                     {"fault", entry.fault}});
  }
  return {{"requests", items}};
}

}  // namespace oxide_sim
