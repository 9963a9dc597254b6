// Putting an unfinished journal entry back in line when Oxide cannot confirm its outcome yet
// (start-up reconciliation of volumes and snapshots): a warning, then a retry after `delay`,
// the next one after twice that up to `max`. Loop thread only.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "loop/delayed_tasks.h"
#include "store/volume_store.h"
#include "util/status.h"

namespace oxide::engine {

// `object` names what the entry is about, e.g. {"volume_id", "<uuid>"}.
void RetryRecoveryLater(DelayedTasks& delayed, const store::OperationRow& entry,
                        std::pair<const char*, std::string> object, const Status& error,
                        std::chrono::milliseconds delay, std::chrono::milliseconds max,
                        std::function<void(std::chrono::milliseconds next_delay)> retry);

}  // namespace oxide::engine
