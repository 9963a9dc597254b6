// The one reader of journal entries (engine/journal_entry.h): kinds and arguments as the engines
// journal them, and arguments a damaged or foreign entry holds (read as none, never a throw).
#include "engine/journal_entry.h"

#include <gtest/gtest.h>

#include "engine/disk_naming.h"
#include "engine/volume_engine.h"

namespace {

using oxide::engine::CreateArgs;
using oxide::engine::CreateSpec;
using oxide::engine::JournalEntry;
using oxide::engine::NodeArgs;
using oxide::engine::OperationKind;
using oxide::engine::OperationKindName;
using oxide::engine::ReadJournalEntry;
using oxide::engine::SnapshotCreateArgs;
using oxide::store::OperationRow;

OperationRow Row(const std::string& kind, const std::string& subject, const std::string& args) {
  return {.id = 7, .kind = kind, .subject = subject, .args = args, .started_ms = 0};
}

TEST(JournalEntryTest, AClonesCreateGivesItsKindSubjectNameAndTemporarySnapshot) {
  JournalEntry entry =
      ReadJournalEntry(Row("create", "csi-disk-1",
                           R"({"co_name":"pvc-1","size":1073741824,"block_size":4096,)"
                           R"("clone_source":"vol-0","temp_snapshot":"csi-clone-1"})"));
  EXPECT_EQ(entry.id, 7);
  EXPECT_EQ(entry.kind, OperationKind::kCreate);
  EXPECT_EQ(entry.kind_name, "create");
  EXPECT_EQ(entry.subject, "csi-disk-1");
  EXPECT_EQ(entry.co_name, "pvc-1");
  EXPECT_EQ(entry.temp_snapshot, "csi-clone-1");
  EXPECT_EQ(entry.node, "");
  EXPECT_FALSE(entry.IsSnapshotOperation());
}

TEST(JournalEntryTest, APublishAndAnUnpublishReadBackTheNodeTheyWereJournaledWith) {
  for (OperationKind kind : {OperationKind::kPublish, OperationKind::kUnpublish}) {
    JournalEntry entry =
        ReadJournalEntry(Row(OperationKindName(kind), "vol-1", NodeArgs("inst-9")));
    EXPECT_EQ(entry.kind, kind);
    EXPECT_EQ(entry.node, "inst-9");
    EXPECT_EQ(entry.co_name, "");
  }
}

TEST(JournalEntryTest, EveryKindReadsBackUnderTheNameItIsJournaledBy) {
  for (OperationKind kind : {OperationKind::kCreate, OperationKind::kDelete,
                             OperationKind::kPublish, OperationKind::kUnpublish,
                             OperationKind::kSnapshotCreate, OperationKind::kSnapshotDelete}) {
    EXPECT_EQ(ReadJournalEntry(Row(OperationKindName(kind), "x", "{}")).kind, kind);
  }
  EXPECT_TRUE(ReadJournalEntry(Row("snapshot_create", "snap-1", "{}")).IsSnapshotOperation());
  EXPECT_TRUE(ReadJournalEntry(Row("snapshot_delete", "id-1", "{}")).IsSnapshotOperation());
}

TEST(JournalEntryTest, AnUnknownKindAndDamagedArgumentsReadAsNoneWithoutThrowing) {
  JournalEntry unknown = ReadJournalEntry(Row("resize", "vol-1", R"({"co_name":"a"})"));
  EXPECT_EQ(unknown.kind, OperationKind::kUnknown);
  EXPECT_EQ(unknown.kind_name, "resize");
  EXPECT_EQ(unknown.co_name, "a");
  // A later version's snapshot kind is still the snapshot engine's, never the volume engine's.
  EXPECT_TRUE(ReadJournalEntry(Row("snapshot_restore", "s", "{}")).IsSnapshotOperation());
  for (const char* args : {"", "not json", "[1,2]", "\"text\"", R"({"co_name":5,"node":null})"}) {
    JournalEntry entry = ReadJournalEntry(Row("publish", "vol-1", args));
    EXPECT_EQ(entry.kind, OperationKind::kPublish) << args;
    EXPECT_EQ(entry.co_name, "") << args;
    EXPECT_EQ(entry.node, "") << args;
    EXPECT_EQ(entry.temp_snapshot, "") << args;
    EXPECT_FALSE(entry.args_readable) << args;
  }
  EXPECT_TRUE(ReadJournalEntry(Row("delete", "vol-1", "{}")).args_readable);
}

TEST(JournalEntryTest, WhatTheWritersJournalReadsBack) {
  CreateSpec clone;
  clone.co_name = "pvc-clone";
  clone.clone_source = "vol-0";
  JournalEntry created = ReadJournalEntry(Row("create", "csi-disk-2", CreateArgs(clone)));
  EXPECT_TRUE(created.args_readable);
  EXPECT_EQ(created.co_name, "pvc-clone");
  EXPECT_EQ(created.temp_snapshot, oxide::engine::CloneSnapshotNameFor("pvc-clone"));
  CreateSpec blank;
  blank.co_name = "pvc-blank";
  EXPECT_EQ(ReadJournalEntry(Row("create", "csi-disk-3", CreateArgs(blank))).temp_snapshot, "");
  JournalEntry snapshot =
      ReadJournalEntry(Row("snapshot_create", "snap-1", SnapshotCreateArgs("vs-1", "vol-1")));
  EXPECT_TRUE(snapshot.args_readable);
  EXPECT_EQ(snapshot.co_name, "vs-1");
}

TEST(JournalEntryTest, EntriesAsThePreviousVersionJournaledThemReadTheSame) {
  // Written by 98520a8 (before the reader and writers moved here), byte for byte.
  JournalEntry clone = ReadJournalEntry(
      Row("create", "csi-disk-4",
          R"({"block_size":4096,"clone_source":"vol-0","co_name":"pvc-4","size":1073741824,)"
          R"("temp_snapshot":"csi-clone-4"})"));
  EXPECT_EQ(clone.co_name, "pvc-4");
  EXPECT_EQ(clone.temp_snapshot, "csi-clone-4");
  EXPECT_EQ(ReadJournalEntry(Row("unpublish", "vol-4", R"({"node":"inst-4"})")).node, "inst-4");
  EXPECT_EQ(ReadJournalEntry(Row("snapshot_create", "snap-4",
                                 R"({"co_name":"vs-4","source_volume_id":"vol-4"})"))
                .co_name,
            "vs-4");
}

TEST(JournalEntryTest, TheWritersWriteWhatThePreviousVersionWrote) {
  // The names and argument bytes 98520a8 journaled, written out here rather than read back through
  // the same table, so a changed name or key fails.
  const std::pair<OperationKind, const char*> names[] = {
      {OperationKind::kCreate, "create"},
      {OperationKind::kDelete, "delete"},
      {OperationKind::kPublish, "publish"},
      {OperationKind::kUnpublish, "unpublish"},
      {OperationKind::kSnapshotCreate, "snapshot_create"},
      {OperationKind::kSnapshotDelete, "snapshot_delete"}};
  for (const auto& [kind, name] : names)
    EXPECT_EQ(OperationKindName(kind), std::string(name));
  EXPECT_EQ(NodeArgs("inst-4"), R"({"node":"inst-4"})");
  EXPECT_EQ(SnapshotCreateArgs("vs-4", "vol-4"),
            R"({"co_name":"vs-4","source_volume_id":"vol-4"})");
  CreateSpec clone;
  clone.co_name = "pvc-4";
  clone.size = 1073741824;
  clone.block_size = 4096;
  clone.clone_source = "vol-0";
  EXPECT_EQ(CreateArgs(clone),
            R"({"block_size":4096,"clone_source":"vol-0","co_name":"pvc-4","size":1073741824,)"
            R"("temp_snapshot":")" +
                oxide::engine::CloneSnapshotNameFor("pvc-4") + R"("})");
}

}  // namespace
