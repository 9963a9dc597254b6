// Guest device emulation (root only): loop devices + sysfs-like tree appear and disappear
// with the right serials; per-instance sysfs roots; stable device order and name reuse across
// an instance stop/start; snapshot/restore copies data; no loop device leaks at exit.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "sim_fixture.h"
#include "support/test_environment.h"
#include "wait_until.h"

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
    if (::geteuid() != 0) OXIDE_SKIP_UNLESS_CI("guest device emulation needs root (loop devices)");
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
  // Serial ("name\n") -> loop device name, for every block entry under `root`.
  static std::map<std::string, std::string> loops_by_serial(const std::string& root) {
    std::map<std::string, std::string> out;
    for (const auto& entry : fs::directory_iterator(fs::path(root) / "block")) {
      out[read_text(entry.path() / "device" / "serial")] = entry.path().filename();
    }
    return out;
  }
  // Stops or starts the instance through the Oxide API and waits for the final run state.
  void lifecycle(const std::string& instance, const std::string& action,
                 const std::string& final_state) {
    const std::string path = "/v1/instances/" + instance;
    Reply reply = api().post(path + "/" + action + "?project=demo", nlohmann::json::object());
    ASSERT_EQ(reply.status, 202) << reply.body;
    ASSERT_TRUE(WaitUntil(
        [&]() { return api().get(path + "?project=demo").json()["run_state"] == final_state; },
        std::chrono::seconds(10), instance + " " + final_state));
  }
  // Two disks seen, stop, detach the first, attach a third, order it first, start: the third
  // disk takes the loop device name the first one had (node "reboot" tests rely on this).
  void expect_name_reuse_across_stop_start() {
    control_instance("node", "stopped", true);
    create_disk("first", 1);
    create_disk("second", 2);
    create_disk("third", 3);
    attach("node", "first");
    attach("node", "second");
    lifecycle("node", "start", "running");
    const auto before = loops_by_serial(dir_ + "/sys");
    ASSERT_EQ(before.size(), 2U);
    const std::string first_loop = before.at("first\n");
    const std::string second_loop = before.at("second\n");

    lifecycle("node", "stop", "stopped");
    EXPECT_TRUE(visible().empty()) << "a stopped guest sees nothing";
    EXPECT_TRUE(loops_backed_in(dir_ + "/backing").empty()) << "stop detaches the loop devices";
    ASSERT_EQ(
        api().post("/v1/instances/node/disks/detach?project=demo", {{"disk", "first"}}).status,
        202);
    attach("node", "third");
    Reply order =
        api().post("/__sim/instances/node/device-order", {{"disk_names", {"third", "second"}}});
    ASSERT_EQ(order.status, 200) << order.body;
    EXPECT_EQ(order.json()["guest_device_order"], nlohmann::json({"third", "second"}));
    lifecycle("node", "start", "running");

    const auto after = loops_by_serial(dir_ + "/sys");
    ASSERT_EQ(after.size(), 2U);
    EXPECT_EQ(after.at("third\n"), first_loop) << "the third disk reuses the first one's name";
    EXPECT_EQ(after.at("second\n"), second_loop);
    const fs::path reused = fs::path(dir_) / "sys" / "block" / first_loop;
    EXPECT_EQ(read_text(reused / "device" / "serial"), "third\n");
    EXPECT_EQ(read_text(reused / "size"), std::to_string(3 * kGiB / 512) + "\n");
    EXPECT_EQ(read_text(reused / "dev"), read_text(fs::path("/sys/block") / first_loop / "dev"));
    EXPECT_EQ(read_text(fs::path("/sys/block") / first_loop / "size"),
              std::to_string(3 * kGiB / 512) + "\n");
    std::set<std::string> nvme_serials;
    for (int i = 0; i < 2; ++i) {
      nvme_serials.insert(read_text(fs::path(dir_) / "sys" / "class" / "nvme" /
                                    ("nvme" + std::to_string(i)) / "serial"));
    }
    EXPECT_EQ(nvme_serials, (std::set<std::string>{"second\n", "third\n"}));
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

TEST_F(GuestDeviceTest, EachInstanceSeesItsDisksUnderItsOwnSysfsRoot) {
  for (const std::string node : {"node-a", "node-b"}) {
    Reply reply = api().post("/__sim/instances", {{"project", "demo"},
                                                  {"name", node},
                                                  {"run_state", "stopped"},
                                                  {"guest_local", true},
                                                  {"guest_sysfs_root", dir_ + "/" + node}});
    ASSERT_EQ(reply.status, 201) << reply.body;
    EXPECT_EQ(reply.json()["guest_sysfs_root"], dir_ + "/" + node);
    EXPECT_TRUE(fs::is_directory(dir_ + "/" + node + "/block")) << "prepared at creation";
  }
  create_disk("disk-a", 1);
  create_disk("disk-b", 2);
  attach("node-a", "disk-a");
  attach("node-b", "disk-b");
  lifecycle("node-a", "start", "running");
  lifecycle("node-b", "start", "running");
  const auto seen_by_a = loops_by_serial(dir_ + "/node-a");
  const auto seen_by_b = loops_by_serial(dir_ + "/node-b");
  ASSERT_EQ(seen_by_a.size(), 1U);
  ASSERT_EQ(seen_by_b.size(), 1U);
  EXPECT_EQ(seen_by_a.begin()->first, "disk-a\n");
  EXPECT_EQ(seen_by_b.begin()->first, "disk-b\n");
  EXPECT_NE(seen_by_a.begin()->second, seen_by_b.begin()->second);
  EXPECT_EQ(read_text(fs::path(dir_) / "node-a" / "class" / "nvme" / "nvme0" / "serial"),
            "disk-a\n");
  EXPECT_EQ(read_text(fs::path(dir_) / "node-b" / "class" / "nvme" / "nvme0" / "serial"),
            "disk-b\n");
  EXPECT_TRUE(visible().empty()) << "the default tree shows neither";
  EXPECT_EQ(loops_backed_in(dir_ + "/backing").size(), 2U);

  lifecycle("node-a", "stop", "stopped");
  EXPECT_TRUE(loops_by_serial(dir_ + "/node-a").empty());
  EXPECT_TRUE(fs::is_empty(dir_ + "/node-a/class/nvme"));
  EXPECT_EQ(loops_by_serial(dir_ + "/node-b"), seen_by_b) << "the other guest is untouched";

  Reply relative = api().post("/__sim/instances", {{"project", "demo"},
                                                   {"name", "node-c"},
                                                   {"guest_local", true},
                                                   {"guest_sysfs_root", "relative/sys"}});
  EXPECT_EQ(relative.status, 400) << relative.body;
  Reply kernel = api().post("/__sim/instances", {{"project", "demo"},
                                                 {"name", "node-c"},
                                                 {"guest_local", true},
                                                 {"guest_sysfs_root", "/sys/fake"}});
  EXPECT_EQ(kernel.status, 400) << kernel.body;
}

TEST_F(GuestDeviceTest, StartReusesAStoppedDisksLoopNameInTheGivenOrder) {
  expect_name_reuse_across_stop_start();
}

TEST_F(GuestDeviceTest, DeviceOrderErrors) {
  control_instance("node", "stopped", true);
  EXPECT_EQ(api().post("/__sim/instances/nowhere/device-order", {{"disk_names", {"a"}}}).status,
            404);
  EXPECT_EQ(api().post("/__sim/instances/node/device-order", {{"disk_names", "a"}}).status, 400);
  EXPECT_EQ(api().post("/__sim/instances/node/device-order", {{"disk_names", {1}}}).status, 400);
}

class GuestStateDbTest : public GuestDeviceTest {
 protected:
  std::vector<std::string> sim_args() const override {
    auto args = GuestDeviceTest::sim_args();
    args.insert(args.end(), {"--state-db", dir_ + "/state.db"});
    return args;
  }
};

TEST_F(GuestStateDbTest, AnInstancesSysfsRootAndDeviceOrderOutliveARestart) {
  Reply created = api().post("/__sim/instances", {{"project", "demo"},
                                                  {"name", "node"},
                                                  {"run_state", "stopped"},
                                                  {"guest_local", true},
                                                  {"guest_sysfs_root", dir_ + "/node"}});
  ASSERT_EQ(created.status, 201) << created.body;
  create_disk("pv-a", 1);
  attach("node", "pv-a");
  ASSERT_EQ(api().post("/__sim/instances/node/device-order", {{"disk_names", {"pv-a"}}}).status,
            200);
  set_run_state("running");
  ASSERT_EQ(loops_by_serial(dir_ + "/node").size(), 1U);
  ASSERT_EQ(sim().stop(), 0);
  EXPECT_TRUE(loops_by_serial(dir_ + "/node").empty()) << "exit removes the entries";

  SimProcess restarted(sim_args());
  ASSERT_TRUE(restarted.running());
  HttpClient client(restarted.base_url());
  const nlohmann::json state = client.get("/__sim/state").json();
  ASSERT_EQ(state["instances"].size(), 1U);
  EXPECT_EQ(state["instances"][0]["guest_sysfs_root"], dir_ + "/node");
  EXPECT_EQ(state["instances"][0]["guest_device_order"], nlohmann::json({"pv-a"}));
  const auto seen = loops_by_serial(dir_ + "/node");
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen.begin()->first, "pv-a\n");
  EXPECT_TRUE(visible().empty()) << "not in the default tree";
  EXPECT_EQ(restarted.stop(), 0);
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

TEST_F(GuestHotplugTest, StartReusesAStoppedDisksLoopNameInTheGivenOrder) {
  expect_name_reuse_across_stop_start();
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
    OXIDE_SKIP_UNLESS_CI("needs root and setpriv to run oxide-sim as an unprivileged user");
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
