// The node's durable volume states (tables node_stagings and node_publications, migration 3):
// a row is written in a transitional state (staging, publishing, unstaging, unpublishing) before
// the side effect and moved to its result (staged, published, or deleted) after it. Rows whose
// mount vanished are marked stale by the start-up reconciliation. Reads come from memory; writes
// change memory at once and go to the store thread with the loop turn's batch, like the
// controller's (GroupCommit::WhenDurable says when they are durable). Loop thread only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loop/loop_affinity.h"
#include "store/group_commit.h"
#include "store/mirror_table.h"
#include "store/sqlite_handle.h"
#include "store/state_db.h"
#include "util/status.h"

namespace oxide::store {

// States of a row. Staging rows: kStaging → [kFormatting →] kStaged → kUnstaging → (deleted);
// publication rows: kPublishing → kPublished → kUnpublishing → (deleted). kStale: the mount is
// gone (e.g. reboot); the CO's retry redoes the work. kFormatting: the device (serial) was
// verified blank and our mkfs (writing format_uuid) may have begun: a crash leaves the intent,
// and the retry for the same volume and serial formats again a device that is blank or holds our
// own unfinished mkfs work, never a complete or since-mounted filesystem (docs/node-safety.md).
// The device columns are hints: every call re-finds the device by serial.
inline constexpr const char* kStaging = "staging";
inline constexpr const char* kFormatting = "formatting";
inline constexpr const char* kStaged = "staged";
inline constexpr const char* kUnstaging = "unstaging";
inline constexpr const char* kPublishing = "publishing";
inline constexpr const char* kPublished = "published";
inline constexpr const char* kUnpublishing = "unpublishing";
inline constexpr const char* kStale = "stale";

struct StagingRow {
  std::string volume_id;
  std::string staging_path;
  std::string state;
  std::string capability;  // canonical text of the volume capability (compared for idempotency)
  bool block = false;
  std::string fs_type;
  std::string serial;
  std::string device_name;    // e.g. "nvme1n1"; empty until found
  std::string device_number;  // "major:minor"; empty until found
  // kFormatting only: the UUID our mkfs writes (chosen before mkfs runs). A device holding a
  // filesystem with another UUID, or one mounted since, is never formatted for this intent.
  std::string format_uuid;
  // The volume is encrypted (LUKS2): its device is the open mapping on its disk, never the disk.
  bool encrypted = false;
};

struct PublicationRow {
  std::string target_path;
  std::string volume_id;
  std::string state;
  std::string staging_path;
  std::string capability;
  bool readonly = false;
};

class NodeVolumeStore {
 public:
  // Reads both tables into memory (at start, before `commit` has taken the connection into use).
  NodeVolumeStore(StateDb* db, GroupCommit* commit);

  std::optional<StagingRow> GetStaging(const std::string& volume_id) const;
  std::vector<StagingRow> ListStagings() const;
  void PutStaging(const StagingRow& row);  // insert or replace
  void DeleteStaging(const std::string& volume_id);

  std::optional<PublicationRow> GetPublication(const std::string& target_path) const;
  std::vector<PublicationRow> ListPublications() const;  // all volumes
  std::vector<PublicationRow> PublicationsOf(const std::string& volume_id) const;
  void PutPublication(const PublicationRow& row);
  void DeletePublication(const std::string& target_path);

  // OK when the rows were all read at construction; otherwise the plugin must not start. Fixed
  // at construction, so not checked: it is read right after the constructor, on its thread.
  const Status& load_status() const { return load_status_; }

 private:
  void Load(sqlite3* db);

  GroupCommit* commit_;
  Status load_status_;
  MirrorTable<std::string, StagingRow> stagings_;          // by volume id
  MirrorTable<std::string, PublicationRow> publications_;  // by target path
  // Prepared at start; used by the store thread only afterwards.
  Statement put_staging_, delete_staging_, put_publication_, delete_publication_;
  LoopAffinity affinity_;
  BatchListener listener_;  // last: commits what is pending before the statements go
};

}  // namespace oxide::store
