// The one place that reads and writes an operation journal entry's arguments: its kind and its
// JSON arguments become a typed JournalEntry (recovery of volumes and snapshots, the clone sweep),
// and the engines journal each operation's arguments through the writers below. Pure: any thread.
#pragma once

#include <cstdint>
#include <string>

#include "store/journal.h"

namespace oxide::engine {

struct CreateSpec;

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
  // False when the arguments are not a JSON object or a field above is not text (a damaged
  // entry): its fields read as empty, and recovery must not claim an outcome it cannot see.
  bool args_readable = true;

  // The SnapshotEngine's (every kind named snapshot_*, also one this version does not know).
  bool IsSnapshotOperation() const { return kind_name.rfind("snapshot_", 0) == 0; }
};

// Arguments that are not a JSON object read as none.
JournalEntry ReadJournalEntry(const store::OperationRow& row);

// The journal arguments of a publish or an unpublish (read back as JournalEntry::node).
std::string NodeArgs(const std::string& node);
// ... of a volume create (read back as co_name and, for a clone, temp_snapshot).
std::string CreateArgs(const CreateSpec& spec);
// ... of a snapshot create (read back as co_name).
std::string SnapshotCreateArgs(const std::string& co_name, const std::string& source_volume_id);

}  // namespace oxide::engine
