#include "engine/recovery_retry.h"

#include <algorithm>

#include "util/log.h"

namespace oxide::engine {

void RetryRecoveryLater(DelayedTasks& delayed, const JournalEntry& entry,
                        std::pair<const char*, std::string> object, const Status& error,
                        std::chrono::milliseconds delay, std::chrono::milliseconds max,
                        std::function<void(std::chrono::milliseconds next_delay)> retry) {
  log::Warn("cannot reconcile an unfinished operation yet; will retry",
            {{object.first, object.second},
             {"operation", entry.kind_name},
             {"error", error.message()},
             {"oxide_operation", error.oxide_operation()},
             {"oxide_request_id", error.oxide_request_id()},
             {"retry_in_ms", log::Num(static_cast<int64_t>(delay.count()))}});
  const auto next = std::min(delay * 2, max);
  delayed.RunAfter(delay, [retry = std::move(retry), next] { retry(next); });
}

}  // namespace oxide::engine
