// Disk names derived from CSI names (deterministic, Oxide-valid, unique NVMe serial), the
// description that records the CSI name, and SHA-256 against published test vectors.
#include "engine/disk_naming.h"

#include <gtest/gtest.h>

#include <set>

#include "config/validation.h"
#include "util/sha256.h"
#include "util/utf8_cut.h"

namespace oxide::engine {
namespace {

TEST(Sha256, MatchesPublishedVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(DiskNaming, NamesAreDeterministicValidAndKeepAReadablePart) {
  std::string name = DiskNameFor("pvc-3f2a9c1e-8b7d-4e6f-a5c4-1d2e3f4a5b6c");
  EXPECT_EQ(name, DiskNameFor("pvc-3f2a9c1e-8b7d-4e6f-a5c4-1d2e3f4a5b6c"));
  EXPECT_EQ(name.substr(0, 4), "csi-");
  EXPECT_LE(name.size(), 63u);
  EXPECT_EQ(OxideNameProblem(name), "");
  EXPECT_NE(name.find("-pvc-3f2a9c1e"), std::string::npos);
  EXPECT_TRUE(IsPluginDiskName(name));
  EXPECT_EQ(NvmeSerialOf(name).size(), kNvmeSerialBytes);
}

TEST(DiskNaming, OddNamesStillGiveValidOxideNames) {
  for (std::string co_name :
       {std::string("A"), std::string("---"), std::string("UPPER_case.and spaces/"),
        std::string(300, 'x'), std::string("\xc3\xa9t\xc3\xa9"),
        std::string("12345678-1234-1234-1234-123456789012")}) {
    std::string name = DiskNameFor(co_name);
    EXPECT_EQ(OxideNameProblem(name), "") << co_name << " -> " << name;
    EXPECT_LE(name.size(), 63u);
    EXPECT_TRUE(IsPluginDiskName(name)) << name;
  }
  EXPECT_EQ(DiskNameFor("---").size(), 20u);  // nothing readable survives
}

TEST(DiskNaming, SerialsOfSimilarNamesDiffer) {
  // Kubernetes names share long prefixes; the serial (first 20 bytes) must still be unique.
  std::set<std::string> serials;
  for (int i = 0; i < 5000; ++i) {
    serials.insert(NvmeSerialOf(DiskNameFor("pvc-00000000-0000-0000-0000-" + std::to_string(i))));
  }
  EXPECT_EQ(serials.size(), 5000u);
}

TEST(DiskNaming, OtherNamesAreNotOurs) {
  EXPECT_FALSE(IsPluginDiskName("pvc-1234"));
  EXPECT_FALSE(IsPluginDiskName("csi-0123"));
  EXPECT_FALSE(IsPluginDiskName("csi-0123456789abcdeg"));
  EXPECT_FALSE(IsPluginDiskName("csi-0123456789abcdefx"));
  EXPECT_TRUE(IsPluginDiskName("csi-0123456789abcdef"));
  EXPECT_TRUE(IsPluginDiskName("csi-0123456789abcdef-x"));
}

TEST(DiskNaming, DescriptionRecordsTheCsiNameExactly) {
  for (std::string co_name : {std::string("pvc-1"), std::string("with \"quotes\" and \\ slash"),
                              std::string("x for pvc y/z")}) {
    std::string description = DescriptionFor(co_name, "ns", "claim");
    EXPECT_EQ(CoNameFromDescription(description), co_name) << description;
  }
  EXPECT_EQ(DescriptionFor("pvc-1", "default", "data"),
            "oxide-csi volume \"pvc-1\" for pvc default/data");
  EXPECT_EQ(DescriptionFor("pvc-1", "", ""), "oxide-csi volume \"pvc-1\"");
  EXPECT_FALSE(CoNameFromDescription("").has_value());
  EXPECT_FALSE(CoNameFromDescription("csi volume").has_value());
  EXPECT_FALSE(CoNameFromDescription("oxide-csi volume \"unterminated").has_value());
}

TEST(DiskNaming, SnapshotAndCloneNamesAreDeterministicAndDistinct) {
  EXPECT_EQ(SnapshotNameFor("snapshot-1"), SnapshotNameFor("snapshot-1"));
  EXPECT_NE(SnapshotNameFor("snapshot-1"), SnapshotNameFor("snapshot-2"));
  EXPECT_EQ(SnapshotNameFor("snapshot-1").rfind("csi-snap-", 0), 0u);
  EXPECT_EQ(CloneSnapshotNameFor("pvc-1").rfind("csi-clone-", 0), 0u);
  EXPECT_LE(SnapshotNameFor(std::string(300, 'A')).size(), 63u);
  EXPECT_FALSE(IsPluginDiskName(SnapshotNameFor("snapshot-1")));
  EXPECT_FALSE(IsPluginDiskName(CloneSnapshotNameFor("pvc-1")));
  EXPECT_EQ(CoNameFromSnapshotDescription(SnapshotDescriptionFor("with \"quote\"")),
            "with \"quote\"");
  EXPECT_FALSE(CoNameFromSnapshotDescription(DescriptionFor("pvc-1", "", "")).has_value());
  EXPECT_FALSE(CoNameFromDescription(SnapshotDescriptionFor("snapshot-1")).has_value());
}

TEST(DiskNaming, ACloneRecordsItsSourceAfterTheCsiName) {
  const std::string source = "11111111-2222-3333-4444-555555555555";
  std::string description = CloneDescriptionFor("pvc-2", "ns", "claim", source);
  EXPECT_EQ(CoNameFromDescription(description), "pvc-2");
  EXPECT_EQ(ClonedFromDescription(description), source);
  EXPECT_FALSE(ClonedFromDescription(DescriptionFor("pvc-2", "ns", "claim")).has_value());
  // A CSI name that merely contains the marker is not a clone.
  EXPECT_FALSE(
      ClonedFromDescription(DescriptionFor("x cloned from volume " + source, "", "")).has_value());
}

// Oxide refuses a description over 512 bytes: the PVC part is cut (on a character boundary, with
// "…"); the CSI name and the clone source, which are read back, are kept whole.
TEST(DiskNaming, DescriptionsFitOxidesLimitAndKeepWhatIsReadBack) {
  const std::string source = "11111111-2222-3333-4444-555555555555";
  const std::string co_name = std::string(64, '"') + std::string(64, 'n');  // 128 bytes, escaped
  const std::string pvc_name = "\xc3\xa9" + std::string(5000, 'p');         // é, then 5 KB
  const std::string ellipsis = "\xe2\x80\xa6";
  std::string plain = DescriptionFor(co_name, std::string(5000, 's'), pvc_name);
  EXPECT_LE(plain.size(), 512u);
  EXPECT_EQ(CoNameFromDescription(plain), co_name);
  EXPECT_EQ(plain.substr(plain.size() - ellipsis.size()), ellipsis);
  std::string clone = CloneDescriptionFor(co_name, std::string(5000, 's'), pvc_name, source);
  EXPECT_LE(clone.size(), 512u);
  EXPECT_EQ(CoNameFromDescription(clone), co_name);
  EXPECT_EQ(ClonedFromDescription(clone), source);
  EXPECT_NE(clone.find(ellipsis + " cloned from volume "), std::string::npos) << clone;
}

TEST(CutUtf8, NeverSplitsACharacter) {
  EXPECT_EQ(CutUtf8("short", 10), "short");
  EXPECT_EQ(CutUtf8("abcdefgh", 6), "abc\xe2\x80\xa6");
  // "é" is two bytes: a budget that would split it keeps it out.
  EXPECT_EQ(CutUtf8("ab\xc3\xa9zzzz", 6), "ab\xe2\x80\xa6");
  EXPECT_EQ(CutUtf8("ab\xc3\xa9zzzz", 7), "ab\xc3\xa9\xe2\x80\xa6");
  EXPECT_EQ(CutUtf8("abcdef", 2), "");
}

}  // namespace
}  // namespace oxide::engine
