// The one place that reads an operation journal entry: its kind and its JSON arguments become a
// typed JournalEntry (recovery of volumes and snapshots, the clone sweep); also writes the
// arguments of a publish and an unpublish. Pure: any thread.
#pragma once

#include <cstdint>
#include <string>

#include "store/journal.h"

namespace oxide::engine {

enum class OperationKind {
  kCreate,
  kDelete,
  kPublish,
  kUnpublish,
  kSnapshotCreate,
  kSnapshotDelete,
  kUnknown,  // a kind this version does not know
};

// The name an entry of `kind` is journaled under (kUnknown: "").
const char* OperationKindName(OperationKind kind);

struct JournalEntry {
  int64_t id = 0;
  OperationKind kind = OperationKind::kUnknown;
  std::string kind_name;  // as journaled (logs name the operation by it)
  std::string subject;    // the journal's subject (store::OperationRow::subject)
  // From the arguments; empty when the entry has none.
  std::string co_name;        // create, snapshot_create: the CO's name
  std::string node;           // publish, unpublish: the instance
  std::string temp_snapshot;  // a clone's create: its temporary snapshot

  // The SnapshotEngine's (every kind named snapshot_*, also one this version does not know).
  bool IsSnapshotOperation() const { return kind_name.rfind("snapshot_", 0) == 0; }
};

// Arguments that are not a JSON object read as none.
JournalEntry ReadJournalEntry(const store::OperationRow& row);

// The journal arguments of a publish or an unpublish (read back as JournalEntry::node).
std::string NodeArgs(const std::string& node);

}  // namespace oxide::engine
