// Node benchmark: through the real plugin binary on its unix socket, with real 1 GiB loop
// devices (sparse files) shown in a fake sysfs tree: stage + publish of a blank ext4 volume
// (mkfs included) and of an already formatted one; the repeat of a done stage and of a done publish
// (the kubelet's retries: the node re-finds the device by serial and checks the mount table each
// time); and 8 volumes staged concurrently vs. one by one. Each is measured for plain volumes and
// then, in the same run, for encrypted ones (LUKS2, docs/encryption.md; `--encrypted no` leaves
// them out). Where the kernel has no device-mapper, cryptsetup's open/status/close are played by
// test/support/fake_cryptsetup.sh (real header, real key derivation, a loop device as the
// mapping): the KDF and format costs are real, the encryption of the data written is not. Needs
// root. With OXIDE_CSI_TEST_PLUGIN_BIN set, another plugin binary is measured.
//
//   node_bench [--repeats N] [--fs-type ext4|xfs] [--encrypted yes|no]
//              [--plugin-flag --max-concurrent-formats=8]...
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <string>
#include <vector>

#include "csi.grpc.pb.h"
#include "support/cryptsetup_double.h"
#include "support/loop_disk.h"
#include "support/node_client.h"
#include "support/plugin_setup.h"

namespace oxide::bench {
namespace {

using Clock = std::chrono::steady_clock;
using testing::LoopDisk;

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

std::string Serial(int i) {
  char text[32];
  std::snprintf(text, sizeof text, "csi-%016x", 0xbe00 + i);
  return text;
}

class Bench {
 public:
  Bench(std::string fs_type, const std::vector<std::string>& plugin_flags, bool encrypted,
        int first_serial)
      : fs_type_(std::move(fs_type)), encrypted_(encrypted), first_serial_(first_serial) {
    std::filesystem::create_directories(setup_.File("sys/block"));
    setup_.args.push_back("--sysfs-root=" + setup_.File("sys"));
    setup_.args.push_back("--log-level=warn");
    for (const std::string& flag : plugin_flags)
      setup_.args.push_back(flag);
    if (encrypted_) {
      testing::UseCryptsetupWrapper(setup_);
      context_ = {{"encrypted", "true"}};
      secrets_ = {{"encryptionPassphrase", "node_bench passphrase, 32 bytes!"}};
    }
    plugin_ = setup_.Start();
    client_ = std::make_unique<testing::NodeClient>(setup_.socket_path());
    capability_ = testing::NodeClient::MountCapability(fs_type_);
  }

  LoopDisk& NewDisk() {
    int i = static_cast<int>(disks_.size());
    disks_.push_back(std::make_unique<LoopDisk>(setup_.File("d" + std::to_string(i) + ".img"),
                                                setup_.File("sys"), Serial(first_serial_ + i),
                                                1024));
    if (!disks_.back()->ok()) Die("cannot attach a loop device");
    return *disks_.back();
  }
  int disk_count() const { return static_cast<int>(disks_.size()); }

  std::string Staging(int i) const { return setup_.File("stage/" + std::to_string(i)); }
  std::string Target(int i) const { return setup_.File("pods/" + std::to_string(i)); }
  std::string Volume(int i) const { return "bench-vol-" + std::to_string(i); }

  void Stage(int i) {
    Check(client_->Stage(Volume(i), Serial(first_serial_ + i) + "-bench", Staging(i), capability_,
                         context_, secrets_),
          "stage");
  }
  void Publish(int i) {
    Check(client_->Publish(Volume(i), Staging(i), Target(i), capability_), "publish");
  }
  void Unpublish(int i) { Check(client_->Unpublish(Volume(i), Target(i)), "unpublish"); }
  void Unstage(int i) { Check(client_->Unstage(Volume(i), Staging(i)), "unstage"); }

  [[noreturn]] void Die(const std::string& why) {
    std::fprintf(stderr, "node_bench: %s\n%s\n", why.c_str(), plugin_->Log().c_str());
    std::exit(1);
  }

 private:
  void Check(const grpc::Status& status, const char* what) {
    if (!status.ok()) Die(std::string(what) + " failed: " + status.error_message());
  }

  std::string fs_type_;
  bool encrypted_;
  int first_serial_;
  std::map<std::string, std::string> context_, secrets_;
  testing::PluginSetup setup_{"node"};
  std::unique_ptr<testing::PluginProcess> plugin_;
  std::unique_ptr<testing::NodeClient> client_;
  csi::v1::VolumeCapability capability_;
  std::vector<std::unique_ptr<LoopDisk>> disks_;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Times {
  std::vector<double> stage, repeat_stage, publish, repeat_publish;
};

void Run(int repeats, const std::string& fs_type, const std::vector<std::string>& plugin_flags,
         bool encrypted) {
  // Serials of their own: a mapping of an encrypted run cannot meet a plain run's disk.
  Bench bench(fs_type, plugin_flags, encrypted, encrypted ? 0x100 : 0);
  const char* kind = encrypted ? "encrypted" : "plain";
  // Stage and publish volume i, each twice (the second is a retry of a done call), record the
  // times, then unpublish and unstage it.
  auto cycle = [&bench](int i, Times& times) {
    auto t0 = Clock::now();
    bench.Stage(i);
    auto t1 = Clock::now();
    bench.Stage(i);
    auto t2 = Clock::now();
    bench.Publish(i);
    auto t3 = Clock::now();
    bench.Publish(i);
    auto t4 = Clock::now();
    times.stage.push_back(Ms(t1 - t0));
    times.repeat_stage.push_back(Ms(t2 - t1));
    times.publish.push_back(Ms(t3 - t2));
    times.repeat_publish.push_back(Ms(t4 - t3));
    bench.Unpublish(i);
    bench.Unstage(i);
  };
  Times blank, formatted;
  for (int r = 0; r < repeats; ++r) {
    bench.NewDisk();
    int i = bench.disk_count() - 1;
    cycle(i, blank);
    cycle(i, formatted);
  }
  auto row = [](const char* label, const Times& t) {
    std::printf("  %-24s %8.1f %8.2f %8.1f %8.2f %13.1f\n", label, Median(t.stage),
                Median(t.repeat_stage), Median(t.publish), Median(t.repeat_publish),
                Median(t.stage) + Median(t.publish));
  };
  std::printf(
      "1 GiB %s %s volume, median of %d (ms)   stage   repeat  publish   repeat  "
      "stage+publish\n",
      kind, fs_type.c_str(), repeats);
  row("blank (mkfs included)", blank);
  row("already formatted", formatted);

  constexpr int kVolumes = 8;
  std::vector<int> sequential, concurrent;
  for (int v = 0; v < kVolumes; ++v) {
    bench.NewDisk();
    sequential.push_back(bench.disk_count() - 1);
  }
  for (int v = 0; v < kVolumes; ++v) {
    bench.NewDisk();
    concurrent.push_back(bench.disk_count() - 1);
  }
  auto s0 = Clock::now();
  for (int i : sequential)
    bench.Stage(i);
  double one_by_one = Ms(Clock::now() - s0);
  auto c0 = Clock::now();
  std::vector<std::future<void>> calls;
  for (int i : concurrent)
    calls.push_back(std::async(std::launch::async, [&bench, i] { bench.Stage(i); }));
  for (auto& call : calls)
    call.get();
  double together = Ms(Clock::now() - c0);
  std::printf("8 blank 1 GiB %s %s volumes staged (mkfs included), wall time (ms)\n", kind,
              fs_type.c_str());
  std::printf("  one by one                       %8.1f\n", one_by_one);
  std::printf("  concurrently                     %8.1f   (%.2fx)\n", together,
              one_by_one / together);
  for (int i : sequential)
    bench.Unstage(i);
  for (int i : concurrent)
    bench.Unstage(i);
}

}  // namespace
}  // namespace oxide::bench

int main(int argc, char** argv) {
  int repeats = 5;
  std::string fs_type = "ext4";
  bool encrypted = true;
  std::vector<std::string> plugin_flags;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--fs-type") == 0) fs_type = argv[i + 1];
    if (std::strcmp(argv[i], "--encrypted") == 0) encrypted = std::strcmp(argv[i + 1], "no") != 0;
    if (std::strcmp(argv[i], "--plugin-flag") == 0) plugin_flags.push_back(argv[i + 1]);
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "node_bench needs root (loop devices, mkfs, mount)\n");
    return 2;
  }
  oxide::bench::Run(repeats, fs_type, plugin_flags, false);
  if (encrypted) {
    std::printf("(encrypted: %s)\n",
                oxide::testing::KernelHasDeviceMapper()
                    ? "real cryptsetup and dm-crypt"
                    : "no device-mapper in this kernel: real LUKS2 format and key derivation, "
                      "cryptsetup open/close played by test/support/fake_cryptsetup.sh, the data "
                      "itself not encrypted");
    oxide::bench::Run(repeats, fs_type, plugin_flags, true);
  }
  return 0;
}
