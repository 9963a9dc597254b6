// Unit tests of the device finder against fake sysfs trees in a temporary directory: exact
// serial matching, trailing padding, ambiguity, device-number verification, the NVMe count.
#include "node/device_finder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "support/temp_dir.h"
#include "support/test_environment.h"

namespace oxide::node {
namespace {

namespace fs = std::filesystem;
using oxide::testing::ReadFile;
using oxide::testing::TempDir;
using oxide::testing::WriteFile;

// A real block device of this machine (name and "major:minor"), so that the /dev check passes.
bool RealBlockDevice(std::string* name, std::string* number) {
  std::error_code ec;
  for (fs::directory_iterator it("/sys/block", ec), end; !ec && it != end; it.increment(ec)) {
    std::string candidate = it->path().filename().string();
    struct stat info {};
    if (stat(("/dev/" + candidate).c_str(), &info) == 0 && S_ISBLK(info.st_mode)) {
      *name = candidate;
      *number = ReadFile(it->path().string() + "/dev");
      return true;
    }
  }
  return false;
}

void AddDevice(const TempDir& root, const std::string& name, const std::string& number,
               const std::string& serial_file) {
  fs::create_directories(root.File("block/" + name + "/device"));
  WriteFile(root.File("block/" + name + "/dev"), number);
  WriteFile(root.File("block/" + name + "/device/serial"), serial_file);
}

TEST(Serial, TrimRemovesNewlineSpacesAndNuls) {
  EXPECT_EQ(TrimSerial("csi-0123456789abcdef\n"), "csi-0123456789abcdef");
  EXPECT_EQ(TrimSerial(std::string("pv-a\0\0\0", 7)), "pv-a");
  EXPECT_EQ(TrimSerial("pv-a      \n"), "pv-a");
  EXPECT_EQ(TrimSerial(" lead"), " lead");
}

TEST(Serial, PluginSerialShape) {
  EXPECT_TRUE(LooksLikePluginSerial("csi-0123456789abcdef"));
  EXPECT_FALSE(LooksLikePluginSerial("csi-0123456789ABCDEF"));
  EXPECT_FALSE(LooksLikePluginSerial("csi-0123456789abcde"));
  EXPECT_FALSE(LooksLikePluginSerial("boot-disk"));
}

TEST(DeviceFinder, FindsExactlyOneMatchIgnoringPadding) {
  std::string name, number;
  if (!RealBlockDevice(&name, &number)) OXIDE_SKIP_UNLESS_CI("no block device on this machine");
  TempDir root;
  AddDevice(root, name, number, "csi-0123456789abcdef    \n");
  AddDevice(root, "fake1", "1:1", "csi-0123456789abcdee\n");
  auto device = FindDeviceBySerial(root.path(), "csi-0123456789abcdef");
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  EXPECT_EQ(device->name, name);
  EXPECT_EQ(device->node, "/dev/" + name);
  EXPECT_TRUE(DeviceStillPresent(root.path(), *device));
  fs::remove_all(root.File("block/" + name));
  EXPECT_FALSE(DeviceStillPresent(root.path(), *device));
}

TEST(DeviceFinder, NeverMatchesAPrefix) {
  TempDir root;
  AddDevice(root, "fake1", "1:1", "csi-0123456789abcdef\n");
  auto device = FindDeviceBySerial(root.path(), "csi-0123456789");
  EXPECT_EQ(device.status().code(), StatusCode::kNotFound);
  EXPECT_NE(device.status().message().find("csi-0123456789"), std::string::npos);
  EXPECT_NE(device.status().message().find(root.path()), std::string::npos);
}

TEST(DeviceFinder, TwoMatchesAreAmbiguous) {
  TempDir root;
  AddDevice(root, "fake1", "1:1", "csi-0123456789abcdef\n");
  AddDevice(root, "fake2", "1:2", "csi-0123456789abcdef\n");
  auto device = FindDeviceBySerial(root.path(), "csi-0123456789abcdef");
  EXPECT_EQ(device.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(device.status().message().find("ambiguous"), std::string::npos);
}

TEST(DeviceFinder, RefusesADeviceNodeWithAnotherNumber) {
  std::string name, number;
  if (!RealBlockDevice(&name, &number)) OXIDE_SKIP_UNLESS_CI("no block device on this machine");
  TempDir root;
  AddDevice(root, name, "4095:1048575\n", "csi-0123456789abcdef\n");
  auto device = FindDeviceBySerial(root.path(), "csi-0123456789abcdef");
  EXPECT_EQ(device.status().code(), StatusCode::kFailedPrecondition);
}

TEST(DeviceFinder, MissingSysfsIsNotFound) {
  EXPECT_EQ(FindDeviceBySerial("/nonexistent-sysfs", "x").status().code(), StatusCode::kNotFound);
}

TEST(DeviceFinder, CountsNvmeDisksThatAreNotThePlugins) {
  TempDir root;
  EXPECT_EQ(CountUnmanagedNvmeDevices(root.path()), 0);
  for (auto [controller, serial] : std::vector<std::pair<std::string, std::string>>{
           {"nvme0", "boot-disk\n"}, {"nvme1", "csi-0123456789abcdef\n"}, {"nvme2", "scratch\n"}}) {
    fs::create_directories(root.File("class/nvme/" + controller));
    WriteFile(root.File("class/nvme/" + controller + "/serial"), serial);
  }
  EXPECT_EQ(CountUnmanagedNvmeDevices(root.path()), 2);
}

}  // namespace
}  // namespace oxide::node
