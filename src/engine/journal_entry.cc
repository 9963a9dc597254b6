#include "engine/journal_entry.h"

#include <array>
#include <nlohmann/json.hpp>
#include <utility>

#include "engine/disk_naming.h"
#include "engine/volume_engine.h"

namespace oxide::engine {
namespace {

constexpr std::array<std::pair<OperationKind, const char*>, 6> kKinds{{
    {OperationKind::kCreate, "create"},
    {OperationKind::kDelete, "delete"},
    {OperationKind::kPublish, "publish"},
    {OperationKind::kUnpublish, "unpublish"},
    {OperationKind::kSnapshotCreate, "snapshot_create"},
    {OperationKind::kSnapshotDelete, "snapshot_delete"},
}};

// The text under `key`; "" when absent, and also when it is not text (`readable` then false).
std::string TextOf(const nlohmann::json& args, const char* key, bool* readable) {
  auto it = args.find(key);
  if (it == args.end()) return "";
  if (!it->is_string()) {
    *readable = false;
    return "";
  }
  return it->get<std::string>();
}

}  // namespace

const char* OperationKindName(OperationKind kind) {
  for (const auto& [known, name] : kKinds) {
    if (known == kind) return name;
  }
  return "";
}

JournalEntry ReadJournalEntry(const store::OperationRow& row) {
  JournalEntry entry;
  entry.id = row.id;
  entry.kind_name = row.kind;
  entry.subject = row.subject;
  for (const auto& [known, name] : kKinds) {
    if (row.kind == name) entry.kind = known;
  }
  const nlohmann::json args = nlohmann::json::parse(row.args, nullptr, false);
  if (!args.is_object()) {
    entry.args_readable = false;
    return entry;
  }
  entry.co_name = TextOf(args, "co_name", &entry.args_readable);
  entry.node = TextOf(args, "node", &entry.args_readable);
  entry.temp_snapshot = TextOf(args, "temp_snapshot", &entry.args_readable);
  return entry;
}

std::string NodeArgs(const std::string& node) {
  return nlohmann::json{{"node", node}}.dump();
}

std::string CreateArgs(const CreateSpec& spec) {
  nlohmann::json args = {
      {"co_name", spec.co_name}, {"size", spec.size}, {"block_size", spec.block_size}};
  if (!spec.snapshot_id.empty()) args["snapshot_id"] = spec.snapshot_id;
  if (spec.disk_type != backend::kDiskTypeDistributed) args["disk_type"] = spec.disk_type;
  if (!spec.clone_source.empty()) {
    args["clone_source"] = spec.clone_source;
    args["temp_snapshot"] = CloneSnapshotNameFor(spec.co_name);
  }
  return args.dump();
}

std::string SnapshotCreateArgs(const std::string& co_name, const std::string& source_volume_id) {
  return nlohmann::json{{"co_name", co_name}, {"source_volume_id", source_volume_id}}.dump();
}

}  // namespace oxide::engine
