// The node's durable volume states (tables node_stagings and node_publications, migration 3):
// a row is written in a transitional state (staging, publishing, unstaging, unpublishing) before
// the side effect and moved to its result (staged, published, or deleted) after it. Rows whose
// mount vanished are marked stale by the start-up reconciliation. Loop thread only (it uses the
// StateDb's connection); every write is an autocommit statement that is durable when it returns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/group_commit.h"
#include "store/state_db.h"
#include "util/status.h"

namespace oxide::store {

// States of a row. Staging rows: kStaging → kStaged → kUnstaging → (deleted); publication rows:
// kPublishing → kPublished → kUnpublishing → (deleted). kStale: the mount is gone (e.g. reboot);
// the CO's retry redoes the work.
inline constexpr const char* kStaging = "staging";
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
  // `commit`: the controller's group commit in --mode=all. A write made while its transaction is
  // open joins that transaction, so the write commits it at once to stay durable on return.
  explicit NodeVolumeStore(StateDb* db, GroupCommit* commit = nullptr) : db_(db), commit_(commit) {}

  StatusOr<std::optional<StagingRow>> GetStaging(const std::string& volume_id);
  StatusOr<std::vector<StagingRow>> ListStagings();
  Status PutStaging(const StagingRow& row);  // insert or replace
  Status DeleteStaging(const std::string& volume_id);

  StatusOr<std::optional<PublicationRow>> GetPublication(const std::string& target_path);
  StatusOr<std::vector<PublicationRow>> ListPublications();  // all volumes
  StatusOr<std::vector<PublicationRow>> PublicationsOf(const std::string& volume_id);
  Status PutPublication(const PublicationRow& row);
  Status DeletePublication(const std::string& target_path);

 private:
  Status Write(const std::string& sql, const std::vector<std::string>& values);
  StatusOr<std::vector<StagingRow>> QueryStagings(const std::string& where,
                                                  const std::vector<std::string>& values);
  StatusOr<std::vector<PublicationRow>> QueryPublications(const std::string& where,
                                                          const std::vector<std::string>& values);
  StateDb* db_;
  GroupCommit* commit_;
};

}  // namespace oxide::store
