// Small rules shared by the engines that journal Oxide operations: which errors leave a POST's
// outcome unknown, and how an outcome is written in the journal. Pure: any thread.
#pragma once

#include <string>

#include "util/status.h"

namespace oxide::engine {

inline constexpr const char* kJournalDone = "done";
inline constexpr const char* kJournalFailed = "failed";
inline constexpr const char* kJournalRolledBack = "rolled_back";

// A POST whose outcome is unknown: Oxide may or may not have acted on it.
inline bool OutcomeUnknown(const Status& status) {
  return status.code() == StatusCode::kUnavailable ||
         status.code() == StatusCode::kDeadlineExceeded || status.code() == StatusCode::kUnknown ||
         status.code() == StatusCode::kInternal;
}

inline std::string JournalOutcome(const Status& status) {
  return status.ok() ? "OK" : std::string(StatusCodeName(status.code())) + ": " + status.message();
}

}  // namespace oxide::engine
