#include "support/faulty_vfs.h"

#include <sqlite3.h>

#include <condition_variable>
#include <mutex>

namespace oxide::testing {
namespace {

struct Faults {
  std::mutex mutex;
  std::condition_variable changed;
  bool fail_writes = false;  // guarded by mutex
  bool fail_reads = false;   // guarded by mutex
  bool hold_syncs = false;   // guarded by mutex
  size_t allowed = 0;        // guarded by mutex: syncs that may pass a hold
  size_t held = 0;           // guarded by mutex
  size_t syncs = 0;          // guarded by mutex
};

Faults& TheFaults() {
  static Faults faults;
  return faults;
}

sqlite3_vfs* Real() {
  static sqlite3_vfs* real = sqlite3_vfs_find(nullptr);
  return real;
}

struct FaultyFile {
  sqlite3_file base;
  sqlite3_file* real;  // lives right after this struct, in the space SQLite allocates
};

sqlite3_file* RealOf(sqlite3_file* file) {
  return reinterpret_cast<FaultyFile*>(file)->real;
}

int Close(sqlite3_file* f) {
  return RealOf(f)->pMethods->xClose(RealOf(f));
}
int Read(sqlite3_file* f, void* buffer, int amount, sqlite3_int64 offset) {
  {
    std::lock_guard<std::mutex> lock(TheFaults().mutex);
    if (TheFaults().fail_reads) return SQLITE_IOERR_READ;
  }
  return RealOf(f)->pMethods->xRead(RealOf(f), buffer, amount, offset);
}
int Write(sqlite3_file* f, const void* buffer, int amount, sqlite3_int64 offset) {
  {
    std::lock_guard<std::mutex> lock(TheFaults().mutex);
    if (TheFaults().fail_writes) return SQLITE_IOERR_WRITE;
  }
  return RealOf(f)->pMethods->xWrite(RealOf(f), buffer, amount, offset);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return RealOf(f)->pMethods->xTruncate(RealOf(f), size);
}
int Sync(sqlite3_file* f, int flags) {
  {
    Faults& faults = TheFaults();
    std::unique_lock<std::mutex> lock(faults.mutex);
    ++faults.held;
    faults.changed.notify_all();
    faults.changed.wait(lock, [&] { return !faults.hold_syncs || faults.allowed > 0; });
    if (faults.hold_syncs) --faults.allowed;
    --faults.held;
    ++faults.syncs;
  }
  return RealOf(f)->pMethods->xSync(RealOf(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return RealOf(f)->pMethods->xFileSize(RealOf(f), size);
}
int Lock(sqlite3_file* f, int level) {
  return RealOf(f)->pMethods->xLock(RealOf(f), level);
}
int Unlock(sqlite3_file* f, int level) {
  return RealOf(f)->pMethods->xUnlock(RealOf(f), level);
}
int CheckReservedLock(sqlite3_file* f, int* out) {
  return RealOf(f)->pMethods->xCheckReservedLock(RealOf(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return RealOf(f)->pMethods->xFileControl(RealOf(f), op, arg);
}
int SectorSize(sqlite3_file* f) {
  return RealOf(f)->pMethods->xSectorSize(RealOf(f));
}
int DeviceCharacteristics(sqlite3_file* f) {
  return RealOf(f)->pMethods->xDeviceCharacteristics(RealOf(f));
}
int ShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return RealOf(f)->pMethods->xShmMap(RealOf(f), page, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return RealOf(f)->pMethods->xShmLock(RealOf(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) {
  RealOf(f)->pMethods->xShmBarrier(RealOf(f));
}
int ShmUnmap(sqlite3_file* f, int delete_flag) {
  return RealOf(f)->pMethods->xShmUnmap(RealOf(f), delete_flag);
}
int Fetch(sqlite3_file* f, sqlite3_int64 offset, int amount, void** out) {
  return RealOf(f)->pMethods->xFetch(RealOf(f), offset, amount, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 offset, void* page) {
  return RealOf(f)->pMethods->xUnfetch(RealOf(f), offset, page);
}

const sqlite3_io_methods kMethods = {3,
                                     Close,
                                     Read,
                                     Write,
                                     Truncate,
                                     Sync,
                                     FileSize,
                                     Lock,
                                     Unlock,
                                     CheckReservedLock,
                                     FileControl,
                                     SectorSize,
                                     DeviceCharacteristics,
                                     ShmMap,
                                     ShmLock,
                                     ShmBarrier,
                                     ShmUnmap,
                                     Fetch,
                                     Unfetch};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* faulty = reinterpret_cast<FaultyFile*>(file);
  faulty->base.pMethods = nullptr;
  faulty->real = reinterpret_cast<sqlite3_file*>(faulty + 1);
  int rc = Real()->xOpen(Real(), name, faulty->real, flags, out_flags);
  if (faulty->real->pMethods != nullptr) faulty->base.pMethods = &kMethods;
  return rc;
}
int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return Real()->xDelete(Real(), name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return Real()->xAccess(Real(), name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return Real()->xFullPathname(Real(), name, size, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) {
  return Real()->xDlOpen(Real(), name);
}
void DlError(sqlite3_vfs*, int size, char* out) {
  Real()->xDlError(Real(), size, out);
}
void (*DlSym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return Real()->xDlSym(Real(), handle, symbol);
}
void DlClose(sqlite3_vfs*, void* handle) {
  Real()->xDlClose(Real(), handle);
}
int Randomness(sqlite3_vfs*, int size, char* out) {
  return Real()->xRandomness(Real(), size, out);
}
int Sleep(sqlite3_vfs*, int microseconds) {
  return Real()->xSleep(Real(), microseconds);
}
int CurrentTime(sqlite3_vfs*, double* out) {
  return Real()->xCurrentTime(Real(), out);
}
int GetLastError(sqlite3_vfs*, int size, char* out) {
  return Real()->xGetLastError(Real(), size, out);
}
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return Real()->xCurrentTimeInt64(Real(), out);
}

}  // namespace

void FaultyVfs::Install() {
  static sqlite3_vfs vfs = [] {
    sqlite3_vfs v{};
    v.iVersion = 2;
    v.szOsFile = static_cast<int>(sizeof(FaultyFile)) + Real()->szOsFile;
    v.mxPathname = Real()->mxPathname;
    v.zName = kName;
    v.xOpen = Open;
    v.xDelete = Delete;
    v.xAccess = Access;
    v.xFullPathname = FullPathname;
    v.xDlOpen = DlOpen;
    v.xDlError = DlError;
    v.xDlSym = DlSym;
    v.xDlClose = DlClose;
    v.xRandomness = Randomness;
    v.xSleep = Sleep;
    v.xCurrentTime = CurrentTime;
    v.xGetLastError = GetLastError;
    v.xCurrentTimeInt64 = CurrentTimeInt64;
    return v;
  }();
  static const bool registered = sqlite3_vfs_register(&vfs, 0) == SQLITE_OK;
  (void)registered;
  std::lock_guard<std::mutex> lock(TheFaults().mutex);
  TheFaults().fail_writes = false;
  TheFaults().fail_reads = false;
  TheFaults().hold_syncs = false;
  TheFaults().allowed = 0;
  TheFaults().syncs = 0;
  TheFaults().changed.notify_all();
}

void FaultyVfs::FailWrites(bool fail) {
  std::lock_guard<std::mutex> lock(TheFaults().mutex);
  TheFaults().fail_writes = fail;
}

void FaultyVfs::FailReads(bool fail) {
  std::lock_guard<std::mutex> lock(TheFaults().mutex);
  TheFaults().fail_reads = fail;
}

void FaultyVfs::HoldSyncs() {
  std::lock_guard<std::mutex> lock(TheFaults().mutex);
  TheFaults().hold_syncs = true;
}

void FaultyVfs::AllowSyncs(size_t count) {
  std::lock_guard<std::mutex> lock(TheFaults().mutex);
  TheFaults().allowed += count;
  TheFaults().changed.notify_all();
}

void FaultyVfs::ReleaseSyncs() {
  std::lock_guard<std::mutex> lock(TheFaults().mutex);
  TheFaults().hold_syncs = false;
  TheFaults().allowed = 0;
  TheFaults().changed.notify_all();
}

void FaultyVfs::WaitForHeldSyncs(size_t count) {
  Faults& faults = TheFaults();
  std::unique_lock<std::mutex> lock(faults.mutex);
  faults.changed.wait(lock, [&] { return faults.held >= count; });
}

size_t FaultyVfs::Syncs() {
  std::lock_guard<std::mutex> lock(TheFaults().mutex);
  return TheFaults().syncs;
}

}  // namespace oxide::testing
