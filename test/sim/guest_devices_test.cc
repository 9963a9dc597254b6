// Guest device emulation (root only): loop devices + sysfs-like tree appear and disappear
// with the right serials; snapshot/restore copies data; no loop device leaks at exit.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim_fixture.h"

namespace sim_test {
namespace {
namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Loop devices whose backing file is under `dir`.
std::set<std::string> loops_backed_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator("/sys/block")) {
    const std::string name = entry.path().filename();
    if (name.rfind("loop", 0) != 0) continue;
    std::string backing = read_text(entry.path() / "loop" / "backing_file");
    if (backing.rfind(dir, 0) == 0) out.insert(name);
  }
  return out;
}

class GuestDeviceTest : public SimTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "guest device emulation needs root (loop devices)";
    dir_ = fs::weakly_canonical(testing::TempDir()).string() + "/sim-guest-" +
           std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    SimTest::SetUp();
  }
  void TearDown() override {
    if (::geteuid() != 0) return;
    SimTest::TearDown();
    EXPECT_TRUE(loops_backed_in(dir_ + "/backing").empty()) << "loop devices leaked";
    fs::remove_all(dir_);
  }
  std::vector<std::string> sim_args() const override {
    return {"--guest-backing-dir", dir_ + "/backing", "--guest-sysfs-root", dir_ + "/sys"};
  }
  std::vector<std::string> visible() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir_ + "/sys/block")) {
      out.push_back(entry.path().filename());
    }
    return out;
  }
  void set_run_state(const std::string& state) {
    ASSERT_EQ(api().put("/__sim/instances/node", {{"run_state", state}}).status, 200);
  }
  std::string dir_;
};

TEST_F(GuestDeviceTest, AppearsAtStartWithTheLinuxSerialAndDisappearsAtStop) {
  control_instance("node", "stopped", true);
  const std::string name = "pvc-0123456789abcdef-long-name";
  create_disk(name, 2, 512);
  create_disk("short", 1, 4096);
  attach("node", name);
  attach("node", "short");
  EXPECT_TRUE(visible().empty()) << "a stopped guest sees nothing";
  set_run_state("running");
  const auto devices = visible();
  ASSERT_EQ(devices.size(), 2U);
  std::set<std::string> serials;
  for (const std::string& loop : devices) {
    const fs::path base = fs::path(dir_) / "sys" / "block" / loop;
    const std::string serial = read_text(base / "device" / "serial");
    serials.insert(serial);
    EXPECT_EQ(read_text(base / "device" / "model"), "\n");
    const std::string dev = read_text(base / "dev");
    EXPECT_EQ(dev, read_text(fs::path("/sys/block") / loop / "dev"));
    EXPECT_TRUE(fs::is_block_file("/dev/" + loop));
    if (serial == "pvc-0123456789abcdef\n") {
      EXPECT_EQ(read_text(base / "size"), std::to_string(2 * kGiB / 512) + "\n");
      EXPECT_EQ(read_text(base / "queue" / "logical_block_size"), "512\n");
      EXPECT_EQ(read_text(fs::path("/sys/block") / loop / "queue" / "logical_block_size"), "512\n");
    } else {
      EXPECT_EQ(serial, "short\n");
      EXPECT_EQ(read_text(base / "queue" / "logical_block_size"), "4096\n");
    }
  }
  EXPECT_EQ(serials, (std::set<std::string>{"pvc-0123456789abcdef\n", "short\n"}));
  std::set<std::string> nvme_serials;
  for (int i = 0; i < 2; ++i) {
    nvme_serials.insert(read_text(fs::path(dir_) / "sys" / "class" / "nvme" /
                                  ("nvme" + std::to_string(i)) / "serial"));
  }
  EXPECT_EQ(nvme_serials, serials);
  EXPECT_EQ(loops_backed_in(dir_ + "/backing").size(), 2U);
  set_run_state("stopped");
  EXPECT_TRUE(visible().empty());
  EXPECT_TRUE(loops_backed_in(dir_ + "/backing").empty());
}

TEST_F(GuestDeviceTest, SnapshotAndRestoreCopyData) {
  control_instance("node", "stopped", true);
  create_disk("source", 1, 4096);
  attach("node", "source");
  set_run_state("running");
  ASSERT_EQ(visible().size(), 1U);
  const std::string device = "/dev/" + visible()[0];
  const std::string pattern = "oxide-sim pattern 0123456789";
  {
    const int fd = ::open(device.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, pattern.data(), pattern.size(), 4096 * 100),
              static_cast<ssize_t>(pattern.size()));
    ::close(fd);  // no fsync: the simulator must flush before copying
  }
  Reply snapshot = api().post("/v1/snapshots?project=demo",
                              {{"name", "snap"}, {"description", ""}, {"disk", "source"}});
  ASSERT_EQ(snapshot.status, 201);
  nlohmann::json restore = {
      {"name", "restored"},
      {"description", ""},
      {"size", 2 * kGiB},
      {"disk_backend",
       {{"type", "distributed"},
        {"disk_source", {{"type", "snapshot"}, {"snapshot_id", snapshot.json()["id"]}}}}}};
  ASSERT_EQ(api().post("/v1/disks?project=demo", restore).status, 201);
  set_run_state("stopped");
  ASSERT_EQ(api().post("/v1/instances/node/disks/detach?project=demo", {{"disk", "source"}}).status,
            202);
  attach("node", "restored");
  set_run_state("running");
  ASSERT_EQ(visible().size(), 1U);
  const fs::path base = fs::path(dir_) / "sys" / "block" / visible()[0];
  EXPECT_EQ(read_text(base / "device" / "serial"), "restored\n");
  EXPECT_EQ(read_text(base / "size"), std::to_string(2 * kGiB / 512) + "\n");
  std::string back(pattern.size(), '\0');
  const int fd = ::open(("/dev/" + visible()[0]).c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pread(fd, back.data(), back.size(), 4096 * 100), static_cast<ssize_t>(back.size()));
  ::close(fd);
  EXPECT_EQ(back, pattern);
}

class GuestHotplugTest : public GuestDeviceTest {
 protected:
  std::vector<std::string> sim_args() const override {
    auto args = GuestDeviceTest::sim_args();
    args.push_back("--hotplug");
    return args;
  }
};

TEST_F(GuestHotplugTest, AttachWhileRunningAppearsAndDetachRemoves) {
  control_instance("node", "running", true);
  control_instance("elsewhere", "running", false);
  create_disk("hot", 1);
  create_disk("remote", 1);
  attach("elsewhere", "remote");
  EXPECT_TRUE(visible().empty()) << "disks of other instances are not this machine's";
  attach("node", "hot");
  ASSERT_EQ(visible().size(), 1U);
  ASSERT_EQ(api().post("/v1/instances/node/disks/detach?project=demo", {{"disk", "hot"}}).status,
            202);
  EXPECT_TRUE(visible().empty());
}

TEST_F(GuestDeviceTest, SigkillThenRestartReleasesStaleLoopDevices) {
  control_instance("node", "stopped", true);
  create_disk("pv-a");
  attach("node", "pv-a");
  set_run_state("running");
  ASSERT_EQ(loops_backed_in(dir_ + "/backing").size(), 1U);
  sim().kill_hard();
  EXPECT_EQ(loops_backed_in(dir_ + "/backing").size(), 1U);  // SIGKILL cannot clean up
  SimProcess restarted(sim_args());
  // Without --state-db the state is gone; the stale device must be released anyway.
  EXPECT_TRUE(loops_backed_in(dir_ + "/backing").empty());
  EXPECT_EQ(restarted.stop(), 0);
}

TEST_F(GuestDeviceTest, SparseBackingFilesFollowDisks) {
  const std::string id = create_disk("pv-a", 3)["id"];
  const fs::path file = fs::path(dir_) / "backing" / (id + ".img");
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(fs::file_size(file), 3 * kGiB);
  ASSERT_EQ(api().del("/v1/disks/pv-a?project=demo").status, 204);
  EXPECT_FALSE(fs::exists(file));
}

}  // namespace
}  // namespace sim_test

namespace sim_test {
namespace {

TEST(GuestDevicesWithoutRoot, RefusedAtStartWithAClearMessage) {
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) {
    GTEST_SKIP() << "needs root and setpriv to run oxide-sim as an unprivileged user";
  }
  const std::string command = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups " +
                              SimProcess::binary_path() +
                              " --port 0 --guest-backing-dir /tmp/oxide-sim-nonroot 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr)
    output += buffer;
  const int status = ::pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << output;
  EXPECT_NE(output.find("needs root"), std::string::npos) << output;
}

}  // namespace
}  // namespace sim_test
