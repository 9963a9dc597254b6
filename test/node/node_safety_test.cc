// What the node must refuse, through the real plugin binary: bad paths and inputs, formatting a
// disk that holds data or another filesystem, ambiguous or missing devices, and a second
// operation on a volume while one is in flight. Root only (CTest label "root").
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <random>

#include "node_fixture.h"
#include "support/temp_dir.h"

namespace oxide::testing {
namespace {

namespace fs = std::filesystem;
constexpr const char* kDiskA = "csi-0123456789abcdef-e2e";

std::string ReadDevice(const std::string& node, size_t offset, size_t size) {
  std::string data(size, '\0');
  int fd = open(node.c_str(), O_RDONLY);
  if (fd < 0) return "";
  ssize_t n = pread(fd, data.data(), size, static_cast<off_t>(offset));
  close(fd);
  return n == static_cast<ssize_t>(size) ? data : "";
}

void WriteDevice(const std::string& node, size_t offset, const std::string& data) {
  int fd = open(node.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset)),
            static_cast<ssize_t>(data.size()));
  fsync(fd);
  close(fd);
}

TEST_F(NodeTest, RefusesToFormatADiskHoldingRandomData) {
  LoopDisk& disk = AddDisk(kSerialA, 64);
  std::mt19937 random(42);
  std::string noise(8192, '\0');
  for (char& c : noise)
    c = static_cast<char>(random());
  WriteDevice(disk.node(), 3 << 20, noise);  // not at offset 0: no signature for blkid either
  grpc::Status st = Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4"));
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << st.error_message();
  EXPECT_NE(st.error_message().find("refusing to format"), std::string::npos) << st.error_message();
  EXPECT_TRUE(ReadDevice(disk.node(), 3 << 20, noise.size()) == noise) << "the data is intact";
  EXPECT_TRUE(MountsUnder(Path("")).empty());
}

TEST_F(NodeTest, RefusesToFormatADiskWithAPartitionTable) {
  LoopDisk& disk = AddDisk(kSerialA, 64);
  std::string mbr(512, '\0');
  mbr[446 + 4] = static_cast<char>(0x83);  // one Linux partition from LBA 2048, 8192 sectors
  mbr[446 + 9] = 0x08;
  mbr[446 + 13] = 0x20;
  mbr[510] = 0x55;
  mbr[511] = static_cast<char>(0xAA);
  WriteDevice(disk.node(), 0, mbr);
  grpc::Status st = Stage("vol-1", kDiskA, Path("s"), MountCapability("xfs"));
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << st.error_message();
  EXPECT_TRUE(ReadDevice(disk.node(), 0, 512) == mbr) << "the partition table is intact";
}

TEST_F(NodeTest, NeverReformatsAnotherFilesystem) {
  LoopDisk& disk = AddDisk(kSerialA);
  ASSERT_EQ(Shell("mkfs.xfs -q " + disk.node()), 0);
  grpc::Status st = Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4"));
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << st.error_message();
  EXPECT_NE(st.error_message().find("xfs"), std::string::npos) << st.error_message();
  std::string type;
  Shell("blkid -p -o value -s TYPE " + disk.node(), &type);
  EXPECT_EQ(type, "xfs\n");
  // The right type stages fine (and the failure left nothing behind).
  EXPECT_TRUE(Stage("vol-1", kDiskA, Path("s"), MountCapability("xfs")).ok());
  EXPECT_TRUE(Unstage("vol-1", Path("s")).ok());
}

TEST_F(NodeTest, BadPathsAreInvalidArgumentsAndStatsOfAnUnknownVolumeIsNotFound) {
  AddDisk(kSerialA);
  auto capability = MountCapability();
  for (const std::string& bad :
       {std::string(""), std::string("relative/x"), Path("a/../b"), Path("a/./b"), Path("a") + "/",
        std::string("/"), std::string("/etc"), std::string("/etc/x"), std::string("/dev/x"),
        std::string("/proc/x"), std::string("/sys/x"), std::string("/usr/x"),
        std::string("/var")}) {
    SCOPED_TRACE("path \"" + bad + "\"");
    EXPECT_EQ(Stage("vol-1", kDiskA, bad, capability).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(Publish("vol-1", bad, Path("t"), capability).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(Publish("vol-1", Path("s"), bad, capability).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(Unpublish("vol-1", bad).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(Unstage("vol-1", bad).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    // The spec's order for stats: an empty path is INVALID_ARGUMENT; any other path where the
    // volume is not known is NOT_FOUND, checked before the path's syntax (as csi-sanity expects).
    csi::v1::NodeGetVolumeStatsResponse stats;
    EXPECT_EQ(Stats("vol-1", bad, &stats).error_code(),
              bad.empty() ? grpc::StatusCode::INVALID_ARGUMENT : grpc::StatusCode::NOT_FOUND);
  }
  EXPECT_TRUE(MountsUnder(Path("")).empty());
}

TEST_F(NodeTest, BadInputsAreInvalidArgumentsWithAReason) {
  AddDisk(kSerialA);
  struct Case {
    std::string what;
    grpc::Status status;
    std::string needle;
  };
  csi::v1::VolumeCapability no_capability;
  std::vector<Case> cases = {
      {"no volume id", Stage("", kDiskA, Path("s"), MountCapability()), "volume_id"},
      {"no capability", Stage("vol-1", kDiskA, Path("s"), no_capability), "volume_capability"},
      {"btrfs", Stage("vol-1", kDiskA, Path("s"), MountCapability("btrfs")), "btrfs"},
      {"bind flag", Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4", {"bind"})), "bind"},
      {"remount flag", Stage("vol-1", kDiskA, Path("s"), MountCapability("ext4", {"remount"})),
       "remount"},
      {"no disk name", Stage("vol-1", "", Path("s"), MountCapability()), "diskName"},
      {"publish without capability", Publish("vol-1", Path("s"), Path("t"), no_capability),
       "volume_capability"},
      {"publish without volume id", Publish("", Path("s"), Path("t"), MountCapability()),
       "volume_id"},
      {"unpublish without volume id", Unpublish("", Path("t")), "volume_id"},
      {"unstage without volume id", Unstage("", Path("s")), "volume_id"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.what;
    EXPECT_NE(c.status.error_message().find(c.needle), std::string::npos)
        << c.what << ": " << c.status.error_message();
  }
  EXPECT_TRUE(MountsUnder(Path("")).empty());
}

TEST_F(NodeTest, AmbiguousSerialIsRefused) {
  AddDisk(kSerialA, 16);
  AddDisk(kSerialA, 16);
  grpc::Status st = Stage("vol-1", kDiskA, Path("s"), MountCapability());
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("ambiguous"), std::string::npos) << st.error_message();
}

TEST_F(NodeTest, OnlyTheExactSerialMatches) {
  AddDisk("csi-0123456789abcdee", 16);  // one character off
  grpc::Status st = Stage("vol-1", kDiskA, Path("s"), MountCapability());
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(st.error_message().find(kSerialA), std::string::npos) << st.error_message();
  EXPECT_NE(st.error_message().find(sysfs()), std::string::npos) << st.error_message();
}

TEST_F(NodeTest, WaitsForALateDeviceAndAbortsASecondCallMeanwhile) {
  LoopDisk& disk = AddDisk("", 64);  // attached, but not visible yet
  auto first = std::async(std::launch::async,
                          [&] { return Stage("vol-1", kDiskA, Path("s"), MountCapability()); });
  // The stage has begun and waits (up to 2 s) for its device.
  ASSERT_TRUE(
      plugin_->WaitForLog("msg=\"staging volume\" volume_id=vol-1", std::chrono::seconds(10)))
      << plugin_->Log();
  grpc::Status second = Stage("vol-1", kDiskA, Path("s"), MountCapability());
  EXPECT_EQ(second.error_code(), grpc::StatusCode::ABORTED) << second.error_message();
  grpc::Status publish = Publish("vol-1", Path("s"), Path("t"), MountCapability());
  EXPECT_EQ(publish.error_code(), grpc::StatusCode::ABORTED) << publish.error_message() << "\n"
                                                             << plugin_->Log();
  EXPECT_EQ(Unstage("vol-1", Path("s")).error_code(), grpc::StatusCode::ABORTED);
  // Other volumes are not held up.
  EXPECT_EQ(Stage("vol-2", "csi-1111111111111111", Path("s2"), MountCapability("xfs", {"bind"}))
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  disk.Show(kSerialA);
  grpc::Status st = first.get();
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_TRUE(Unstage("vol-1", Path("s")).ok());
}

TEST_F(NodeTest, ADeviceThatNeverAppearsIsNotFoundAfterTheWait) {
  auto start = std::chrono::steady_clock::now();
  grpc::Status st = Stage("vol-1", kDiskA, Path("s"), MountCapability());
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(st.error_message().find("waited 2 s"), std::string::npos) << st.error_message();
  EXPECT_GE(waited, std::chrono::milliseconds(1500));
  EXPECT_LT(waited, std::chrono::seconds(5));
  // The failed stage left no row: publish is refused as not staged.
  EXPECT_EQ(Publish("vol-1", Path("s"), Path("t"), MountCapability()).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(NodeTest, NeverUnmountsAMountThatIsNotTheVolumes) {
  LoopDisk& mine = AddDisk(kSerialA);
  LoopDisk& other = AddDisk(kSerialB);
  ASSERT_EQ(Shell("mkfs.ext4 -q " + other.node()), 0);
  fs::create_directories(Path("foreign"));
  ASSERT_EQ(Shell("mount " + other.node() + " " + Path("foreign")), 0);
  ASSERT_TRUE(Stage("vol-1", kDiskA, Path("s"), MountCapability()).ok());
  // A stray unpublish/unstage naming the foreign mount is refused and leaves it alone.
  EXPECT_EQ(Unpublish("vol-1", Path("foreign")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Unpublish("vol-unknown", Path("foreign")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Unstage("vol-unknown", Path("foreign")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(MountsUnder(Path("foreign")).size(), 1U);
  // Staging onto a path where something else is mounted is refused too.
  AddDisk("csi-2222222222222222", 64);
  EXPECT_EQ(Stage("vol-2", "csi-2222222222222222", Path("foreign"), MountCapability()).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Shell("umount " + Path("foreign")), 0);
  EXPECT_TRUE(Unstage("vol-1", Path("s")).ok());
  (void)mine;
}

}  // namespace
}  // namespace oxide::testing
