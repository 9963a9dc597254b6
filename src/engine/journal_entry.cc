#include "engine/journal_entry.h"

#include <array>
#include <nlohmann/json.hpp>
#include <utility>

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

std::string TextOf(const nlohmann::json& args, const char* key) {
  auto it = args.find(key);
  return it != args.end() && it->is_string() ? it->get<std::string>() : "";
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
  if (!args.is_object()) return entry;
  entry.co_name = TextOf(args, "co_name");
  entry.node = TextOf(args, "node");
  entry.temp_snapshot = TextOf(args, "temp_snapshot");
  return entry;
}

std::string NodeArgs(const std::string& node) {
  return nlohmann::json{{"node", node}}.dump();
}

}  // namespace oxide::engine
