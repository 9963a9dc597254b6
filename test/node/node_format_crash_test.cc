// Crash-safe formatting, with real loop devices, the real mkfs.ext4 and the real plugin: the
// plugin and its mkfs are SIGKILLed together at several moments of a format (as a node reboot or
// an OOM kill of the pod would), then the retry stages the volume and the filesystem checks
// clean; foreign data is still never formatted. mkfs.ext4 formats a loop device in ~20 ms here;
// to land kills inside that run, the plugin (and so its mkfs) gets 3% of a CPU through a cgroup
// v1 cpu quota, like a large disk on a busy node. Root only.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <thread>

#include "node_fixture.h"
#include "support/test_environment.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using namespace std::chrono_literals;

// Pids of the direct children of `parent` (from /proc/<pid>/stat).
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(line.substr(paren + 2));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) children.push_back(pid);
  }
  closedir(proc);
  return children;
}

// Whether the first or the last MiB of `node` hold a byte that is not zero: where the plugin's
// blank check looks (node::ProbeDevice), so data there without a signature is "unknown data"
// that a stage without the format intent refuses.
bool HoldsData(const std::string& node) {
  std::ifstream device(node, std::ios::binary);
  device.seekg(0, std::ios::end);
  const std::streamoff size = device.tellg();
  std::vector<char> buffer(1 << 20);
  for (std::streamoff offset : {std::streamoff{0}, size - std::streamoff{1 << 20}}) {
    device.seekg(offset);
    device.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    for (std::streamsize i = 0; i < device.gcount(); ++i) {
      if (buffer[static_cast<size_t>(i)] != 0) return true;
    }
  }
  return false;
}

// A cgroup v1 cpu controller group with a quota of `percent` of one CPU; processes moved into it
// (and their children) run that slowly. Removed, with its processes moved back, on destruction.
class CpuThrottle {
 public:
  explicit CpuThrottle(int percent)
      : path_("/sys/fs/cgroup/cpu/oxide-csi-test-" + std::to_string(getpid())) {
    if (mkdir(path_.c_str(), 0755) != 0 && errno != EEXIST) return;
    ok_ = Write(path_ + "/cpu.cfs_period_us", "100000") &&
          Write(path_ + "/cpu.cfs_quota_us", std::to_string(percent * 1000));
  }
  ~CpuThrottle() {
    std::ifstream procs(path_ + "/cgroup.procs");
    std::string pid;
    while (std::getline(procs, pid))
      Write("/sys/fs/cgroup/cpu/cgroup.procs", pid);
    rmdir(path_.c_str());
  }
  bool ok() const { return ok_; }
  bool Add(pid_t pid) { return Write(path_ + "/cgroup.procs", std::to_string(pid)); }

 private:
  static bool Write(const std::string& file, const std::string& value) {
    std::ofstream out(file);
    out << value;
    out.flush();
    return static_cast<bool>(out);
  }
  std::string path_;
  bool ok_ = false;
};

class FormatCrashTest : public NodeTest {
 protected:
  void SetUp() override {
    NodeTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!throttle_.ok()) {
      OXIDE_SKIP_UNLESS_CI(
          "no writable cgroup v1 cpu controller at /sys/fs/cgroup/cpu: mkfs cannot be "
          "slowed enough to kill it mid-run");
    }
  }
  // Starts the plugin inside the CPU throttle.
  void StartThrottled() {
    StartPlugin();
    ASSERT_TRUE(throttle_.Add(plugin_->pid()));
  }

  // SIGKILL to the plugin and, in the same instant, to the mkfs it runs; returns once both have
  // exited. A killed mkfs holds its device (opened O_EXCL) until it has exited, and that can be
  // long after the plugin: throttled with it, it runs its exit (and the flush of what it wrote,
  // at its last close of the device) at 3% of a CPU. The next mkfs of the device would find it
  // "apparently in use by the system" meanwhile.
  void KillPluginWithItsMkfs() {
    std::vector<pid_t> children = ChildrenOf(plugin_->pid());
    std::vector<int> exits;  // pidfds, taken before the kill: a reaped pid may be reused
    for (pid_t child : children)
      exits.push_back(OpenPidFd(child));
    plugin_->Signal(SIGKILL);
    for (pid_t child : children)
      kill(child, SIGKILL);
    plugin_->WaitExit();
    plugin_.reset();
    for (size_t i = 0; i < children.size(); ++i) {
      if (exits[i] < 0) continue;  // gone (reaped by the plugin) before its pidfd was taken
      EXPECT_TRUE(WaitPidFdExit(exits[i], 30s))
          << "the killed child " << children[i] << " of the plugin has not exited";
      close(exits[i]);
    }
  }

  CpuThrottle throttle_{3};

  // Waits until mkfs has written something to `node`, or the stage answered (`answered`); false
  // if neither happened within 30 s. Polled: writes to a block device raise no event (inotify
  // sees none) to wait for.
  bool WaitForData(const std::string& node, const std::function<bool()>& answered) {
    return WaitUntil([&] { return HoldsData(node) || answered(); }, 30s);
  }

  // Waits until the plugin runs a child process (mkfs has started), or the stage answered; false
  // if neither happened within 30 s. Polled: a fork in another process raises no event a test can
  // wait for without the kernel's process connector (netlink, CAP_NET_ADMIN); the log line comes
  // before mkfs. The stage's answer ends the wait too: a throttled mkfs can still start and finish
  // between two looks.
  bool WaitForMkfs(const std::function<bool()>& answered) {
    return WaitUntil([&] { return !ChildrenOf(plugin_->pid()).empty() || answered(); }, 30s);
  }

  static std::function<bool()> Answered(const std::future<grpc::Status>& stage) {
    return [&stage] { return stage.wait_for(0s) == std::future_status::ready; };
  }

  // The moments of a format at which AFormatKilledWithThePluginIsDoneAgainByTheRetry kills: the
  // intent is durable (mkfs may not have started); mkfs has started; mkfs has written its first
  // blocks; and 20 and 60 ms after that (at 3% of a CPU, mkfs and the rest of the stage take
  // ~200-300 ms).
  enum class Moment { kIntent, kMkfsStarted, kFirstData, kFirstDataPlus20, kFirstDataPlus60 };
  enum class Landed { kMidFormat, kTooLate };

  // One kill at `moment` of the format of a new disk, then the retry after a restart. kTooLate
  // when the stage had already answered OK before the kill (the scheduler let the throttled format
  // finish first): that try tested nothing, and the caller tries again on another disk.
  Landed KillFormatAt(Moment moment, const std::string& tag, int* left_data) {
    const std::string serial = "csi-0000000000000c" + tag;  // 20 bytes: the whole NVMe serial
    const std::string volume = "vol-crash-" + tag;
    const std::string staging = Path("s" + tag);
    LoopDisk& disk = AddDisk(serial, 2048);
    EXPECT_TRUE(disk.ok());
    auto capability = MountCapability("ext4");
    auto first = std::async(std::launch::async,
                            [&] { return Stage(volume, serial + "-x", staging, capability); });
    const auto answered = Answered(first);
    EXPECT_TRUE(plugin_->WaitForLog("msg=\"formatting volume\" volume_id=" + volume, 30s))
        << plugin_->Log();
    if (moment != Moment::kIntent) {
      EXPECT_TRUE(WaitForMkfs(answered)) << "mkfs never started\n" << plugin_->Log();
    }
    if (moment >= Moment::kFirstData) {
      EXPECT_TRUE(WaitForData(disk.node(), answered)) << "mkfs never wrote\n" << plugin_->Log();
    }
    // Fault injection, not a wait: the sleep *is* the moment of the kill, 20 or 60 ms past the
    // first data (the throttled mkfs writes on through it).
    if (moment == Moment::kFirstDataPlus20 || moment == Moment::kFirstDataPlus60) {
      const auto kill_moment = moment == Moment::kFirstDataPlus20 ? 20ms : 60ms;
      std::this_thread::sleep_for(kill_moment);  // fault injection: no event marks this moment
    }
    KillPluginWithItsMkfs();
    // Only a stage that finished before the kill answers OK.
    const bool too_late = first.get().ok();
    StartThrottled();
    if (too_late) {
      // The stage was done and durable: the restart keeps it, and it is undone like any other.
      EXPECT_TRUE(Unstage(volume, staging).ok());
      return Landed::kTooLate;
    }
    if (HoldsData(disk.node())) ++*left_data;
    EXPECT_NE(plugin_->Log().find("kept the intent of an interrupted format"), std::string::npos);
    grpc::Status retried = Stage(volume, serial + "-x", staging, capability);
    EXPECT_TRUE(retried.ok()) << retried.error_message() << "\n" << plugin_->Log();
    // A kill inside mkfs leaves its unfinished work, formatted again; a kill after mkfs had
    // finished leaves a complete filesystem of ours, mounted as it is.
    const std::string log = plugin_->Log();
    EXPECT_TRUE(log.find("formatting the volume again") != std::string::npos ||
                log.find("our interrupted format had completed") != std::string::npos)
        << log;
    EXPECT_TRUE(Unstage(volume, staging).ok());
    std::string fsck;
    EXPECT_EQ(Shell("fsck.ext4 -n " + disk.node() + " 2>&1", &fsck), 0) << fsck;
    return Landed::kMidFormat;
  }
};

TEST_F(FormatCrashTest, AFormatKilledWithThePluginIsDoneAgainByTheRetry) {
  const std::vector<std::pair<Moment, const char*>> moments = {
      {Moment::kIntent, "intent durable"},
      {Moment::kMkfsStarted, "mkfs started"},
      {Moment::kFirstData, "first data written"},
      {Moment::kFirstDataPlus20, "first data + 20 ms"},
      {Moment::kFirstDataPlus60, "first data + 60 ms"}};
  constexpr int kTries = 3;
  int left_data = 0;
  StopPlugin();
  StartThrottled();
  for (size_t round = 0; round < moments.size(); ++round) {
    SCOPED_TRACE(std::string("killed at: ") + moments[round].second);
    int tries = 0;
    Landed landed = Landed::kTooLate;
    while (landed == Landed::kTooLate && tries < kTries) {
      landed = KillFormatAt(moments[round].first, std::to_string(round) + std::to_string(tries++),
                            &left_data);
      if (HasFatalFailure() || HasFailure()) return;
    }
    EXPECT_TRUE(landed == Landed::kMidFormat)
        << "in " << kTries << " tries the kill never landed before the stage answered";
  }
  // At least the three kills after the first data left half-written devices, which a plain
  // blank check would refuse.
  EXPECT_GE(left_data, 3);
}

TEST_F(FormatCrashTest, AnInterruptedFormatNeverLetsForeignDataBeFormatted) {
  const std::string serial = "csi-00000000000000d0";
  LoopDisk& disk = AddDisk(serial, 2048);
  StopPlugin();
  StartThrottled();
  ASSERT_TRUE(disk.ok());
  auto capability = MountCapability("ext4");
  auto first = std::async(std::launch::async,
                          [&] { return Stage("vol-a", serial + "-x", Path("a"), capability); });
  ASSERT_TRUE(plugin_->WaitForLog("msg=\"formatting volume\" volume_id=vol-a", 30s));
  ASSERT_TRUE(WaitForMkfs(Answered(first)));
  ASSERT_TRUE(WaitForData(disk.node(), Answered(first)));  // killed as mkfs's first blocks land
  ASSERT_FALSE(Answered(first)()) << "the format finished before the kill";
  KillPluginWithItsMkfs();
  EXPECT_FALSE(first.get().ok());
  ASSERT_TRUE(HoldsData(disk.node()));
  StartPlugin();
  // Another volume id on that device has no intent: whatever mkfs left there (data with or
  // without a signature yet), the device is never formatted for it.
  grpc::Status other = Stage("vol-b", serial + "-x", Path("b"), capability);
  EXPECT_EQ(plugin_->Log().find("msg=\"formatting volume\" volume_id=vol-b"), std::string::npos);
  if (other.ok()) {
    ASSERT_TRUE(Unstage("vol-b", Path("b")).ok());
  } else {
    EXPECT_EQ(other.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << other.error_message();
  }
  // A device with foreign data for a volume without an intent: refused, as ever.
  const std::string foreign_serial = "csi-00000000000000d1";
  LoopDisk& foreign = AddDisk(foreign_serial, 64);
  ASSERT_EQ(Shell("head -c 65536 /dev/urandom | dd of=" + foreign.node() +
                  " bs=65536 seek=48 conv=notrunc status=none"),
            0);
  grpc::Status refused = Stage("vol-c", foreign_serial + "-x", Path("c"), capability);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  // An unstage of vol-a clears its intent (the CO gave the stage up; the volume may be used
  // elsewhere before it comes back): the device alone decides, and its half-written state is
  // never formatted without the intent.
  EXPECT_TRUE(Unstage("vol-a", Path("a")).ok());
  const size_t before = plugin_->Log().size();
  grpc::Status again = Stage("vol-a", serial + "-x", Path("a"), capability);
  EXPECT_EQ(plugin_->Log().find("formatting", before), std::string::npos) << plugin_->Log();
  if (again.ok()) {
    ASSERT_TRUE(Unstage("vol-a", Path("a")).ok());
  } else {
    EXPECT_EQ(again.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << again.error_message();
  }
}

}  // namespace
}  // namespace oxide::testing
