// Small rules shared by the engines that journal Oxide operations: which errors leave a POST's
// outcome unknown, how an outcome is written in the journal, and the answer when it could not be.
// Pure: any thread.
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

// The answer to a call whose intent was journaled and sent to Oxide but whose outcome could not
// be recorded (`committed`: why): the entry stays pending and the engine reconciles `subject`
// (e.g. "volume <id>") with Oxide once the state database takes writes again.
inline Status OutcomeNotRecorded(const std::string& subject, const Status& committed) {
  return Unavailable(
      "the intent of this call was recorded and sent to Oxide, but its outcome could not be "
      "recorded (" +
      committed.message() + "); the plugin reconciles " + subject +
      " with Oxide once the state database takes writes again; retry the call");
}

inline std::string JournalOutcome(const Status& status) {
  return status.ok() ? "OK" : std::string(StatusCodeName(status.code())) + ": " + status.message();
}

}  // namespace oxide::engine
