// The loop's in-memory copy of a table: writes show at once; a failed batch's writes are undone
// without touching what later batches wrote; the unique column's index follows every change.
#include "store/mirror_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace oxide::store {
namespace {

using Table = MirrorTable<std::string, std::string>;

std::string ValueOf(const Table& table, const std::string& key) {
  const std::string* value = table.Find(key);
  return value ? *value : "(none)";
}

TEST(MirrorTable, WritesShowAtOnceAndStayWhenTheirBatchCommits) {
  Table table;
  table.Load("k", "loaded");
  table.Write(1, "k", "one");
  table.Write(1, "new", "x");
  EXPECT_EQ(ValueOf(table, "k"), "one");
  EXPECT_EQ(table.pending_keys(), 2u);
  table.BatchDone(1, true);
  EXPECT_EQ(ValueOf(table, "k"), "one");
  EXPECT_EQ(ValueOf(table, "new"), "x");
  EXPECT_EQ(table.pending_keys(), 0u);
}

TEST(MirrorTable, AFailedBatchIsUndoneToWhatTheDatabaseHolds) {
  Table table;
  table.Load("k", "loaded");
  table.Load("gone", "kept");
  table.Write(1, "k", "one");
  table.Write(1, "k", "two");  // a second write of the key in the same batch
  table.Write(1, "gone", std::nullopt);
  table.Write(1, "new", "x");
  table.BatchDone(1, false);
  EXPECT_EQ(ValueOf(table, "k"), "loaded");
  EXPECT_EQ(ValueOf(table, "gone"), "kept");
  EXPECT_EQ(ValueOf(table, "new"), "(none)");
  EXPECT_EQ(table.pending_keys(), 0u);
}

TEST(MirrorTable, AFailedBatchLeavesALaterBatchsWriteOfTheSameKey) {
  Table table;
  table.Load("k", "loaded");
  table.Write(1, "k", "one");
  table.Write(2, "k", "two");
  table.BatchDone(1, false);  // the database never got "one"
  EXPECT_EQ(ValueOf(table, "k"), "two");
  table.BatchDone(2, false);  // nor "two": back to what it holds
  EXPECT_EQ(ValueOf(table, "k"), "loaded");
}

TEST(MirrorTable, ALaterBatchThatCommitsKeepsItsWriteAfterAnEarlierFailure) {
  Table table;
  table.Write(1, "k", "one");
  table.Write(2, "k", "two");
  table.Write(2, "other", "o");
  table.BatchDone(1, false);
  table.BatchDone(2, true);
  EXPECT_EQ(ValueOf(table, "k"), "two");
  EXPECT_EQ(ValueOf(table, "other"), "o");
  table.Write(3, "k", std::nullopt);
  table.BatchDone(3, true);
  EXPECT_EQ(ValueOf(table, "k"), "(none)");
}

struct Volume {
  std::string id;  // unique when not empty, like volumes.volume_id
  std::string state;
};

TEST(MirrorTable, TheUniqueColumnIsIndexedAndAWriteOfAHeldValueReplacesItsHolder) {
  MirrorTable<std::string, Volume> table(&Volume::id);
  table.Load("disk-a", {.id = "id-1", .state = "CREATED"});
  table.Write(1, "disk-b", Volume{.id = "", .state = "CREATING"});  // no id yet: not indexed
  ASSERT_NE(table.FindUnique("id-1"), nullptr);
  EXPECT_EQ(table.FindUnique("id-1")->state, "CREATED");
  EXPECT_EQ(table.FindUnique(""), nullptr);
  // disk-b gets the id disk-a held: as INSERT OR REPLACE, disk-a's row goes.
  table.Write(2, "disk-b", Volume{.id = "id-1", .state = "CREATED"});
  EXPECT_EQ(table.Find("disk-a"), nullptr);
  EXPECT_EQ(table.FindUnique("id-1")->state, "CREATED");
  EXPECT_EQ(table.rows().size(), 1u);
  // Both batches fail: disk-a is back with its id, disk-b is gone.
  table.BatchDone(1, false);
  table.BatchDone(2, false);
  ASSERT_NE(table.Find("disk-a"), nullptr);
  EXPECT_EQ(table.Find("disk-b"), nullptr);
  ASSERT_NE(table.FindUnique("id-1"), nullptr);
  EXPECT_EQ(table.FindUnique("id-1"), table.Find("disk-a"));
  // A new id for a row drops the old one from the index.
  table.Write(3, "disk-a", Volume{.id = "id-2", .state = "CREATED"});
  table.BatchDone(3, true);
  EXPECT_EQ(table.FindUnique("id-1"), nullptr);
  EXPECT_EQ(table.FindUnique("id-2"), table.Find("disk-a"));
}

}  // namespace
}  // namespace oxide::store
