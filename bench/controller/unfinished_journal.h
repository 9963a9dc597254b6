// Turns a stopped plugin's state database into the one a crash would leave: its finished create
// entries pending again (their volumes back in CREATING, no disk id yet) plus pending creates of
// disks that were never made. SQLite directly; the plugin must not be running. Main thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace oxide::bench {

struct UnfinishedCreates {
  int reopened = 0;  // finished create entries made pending again
  int added = 0;     // pending creates added for disks never made
  int pending = 0;   // pending journal entries afterwards
};

// Reopens every finished create entry and adds a pending create (and its CREATING volume row,
// volume_id NULL) for each CSI name in `never_made`, as VolumeEngine::Create journals one, in one
// transaction. False with `error` set on failure.
bool MakeCreatesUnfinished(const std::string& db_path, const std::vector<std::string>& never_made,
                           UnfinishedCreates* counts, std::string* error);

}  // namespace oxide::bench
