// A test double of the one thing a real disk cannot do on demand: an SQLite VFS ("oxide-faulty")
// that passes everything to the default VFS, but can fail writes with an I/O error and can hold
// every sync (fsync) until the test releases it, so a test sees what waits for durability.
// Control calls from the test thread; the VFS runs on whichever thread uses the connection.
#pragma once

#include <cstddef>

namespace oxide::testing {

class FaultyVfs {
 public:
  static constexpr const char* kName = "oxide-faulty";
  // Registers the VFS (once per process) and clears every fault.
  static void Install();

  // While set, every write to a file of the database fails with SQLITE_IOERR_WRITE.
  static void FailWrites(bool fail);
  // While set, every read of a file of the database fails with SQLITE_IOERR_READ.
  static void FailReads(bool fail);
  // While held, every sync blocks until it is allowed (AllowSyncs) or the hold ends.
  static void HoldSyncs();
  static void AllowSyncs(size_t count);
  static void ReleaseSyncs();
  // Blocks until at least `count` syncs are waiting (the commit has reached its fsync).
  static void WaitForHeldSyncs(size_t count = 1);
  static size_t Syncs();  // syncs completed since Install()
};

}  // namespace oxide::testing
