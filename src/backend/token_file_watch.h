// Keeps an ApiToken equal to the token file (OXIDE_TOKEN_FILE) while the plugin runs, so a rotated
// token is used without a restart. The kubelet updates a Secret volume by writing a new directory
// and renaming a `..data` symlink over the old one (`token` -> `..data/token`), so the watch is on
// the file's DIRECTORY (uv_fs_event: any change there makes it read the file), with a stat every
// `period` on the injected Clock as a backstop (inotify misses changes on some volume types), and
// a read at once whenever the ApiToken is asked to refresh (after a 401).
//
// The stat and the read run on libuv's worker pool (uv_queue_work), never on the loop: the file
// is tiny on a tmpfs, but OXIDE_TOKEN_FILE may name any file system, and a hung NFS read must not
// stop the loop. One look at a time; asks that arrive meanwhile share the next one. A file that
// becomes unreadable or empty keeps the last good token and is warned about once per bad state.
// Loop thread only; the loop must run after destruction so the watch handle and a look still on
// the worker pool can finish.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/api_token.h"
#include "loop/clock.h"
#include "loop/loop_affinity.h"

namespace oxide::backend {

class TokenFileWatch {
 public:
  static constexpr std::chrono::milliseconds kStatPeriod{10000};

  // Installs itself as `token`'s refresher and starts watching; `token` already holds the file's
  // token as read at start, and outlives this object.
  TokenFileWatch(uv_loop_t* loop, Clock* clock, std::string path, ApiToken* token,
                 std::chrono::milliseconds period = kStatPeriod);
  // Callbacks still waiting are dropped uncalled.
  ~TokenFileWatch();
  TokenFileWatch(const TokenFileWatch&) = delete;
  TokenFileWatch& operator=(const TokenFileWatch&) = delete;

  const std::string& path() const { return path_; }
  // Looks the file has been read or stat-ed so far (a test sees a look has happened).
  uint64_t looks() const { return looks_; }

 private:
  struct FileIdentity {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
  };
  struct Look;

  // Reads the file (`force`), or stats it and reads it only if it is another file now; `done`
  // (may be empty) runs after a look that began after this call.
  void LookAgain(bool force, std::function<void()> done);
  void StartLook();
  void Finish(Look& look);
  void ArmTimer();
  static void OnDirectoryEvent(uv_fs_event_t* handle, const char* name, int events, int status);

  uv_loop_t* loop_;
  Clock* clock_;
  std::string path_;
  ApiToken* token_;
  std::chrono::milliseconds period_;
  uv_fs_event_t* directory_watch_ = nullptr;  // heap: freed when closed; null if none
  Clock::TimerId timer_ = 0;
  Look* running_ = nullptr;                           // on the worker pool; it frees itself
  std::vector<std::function<void()>> after_running_;  // done when `running_` finishes
  std::vector<std::function<void()>> after_next_;     // asked while `running_` was under way
  bool next_wanted_ = false;
  bool next_forced_ = false;
  FileIdentity known_;        // of the file the current token was read from
  bool known_valid_ = false;  // false until a read succeeds, and while the file is bad
  std::string problem_;       // the bad state warned about; empty while the file is good
  uint64_t looks_ = 0;
  LoopAffinity affinity_;
};

}  // namespace oxide::backend
