// Node benchmark: through the real plugin binary on its unix socket, with real 1 GiB loop
// devices (sparse files) shown in a fake sysfs tree: stage + publish of a blank ext4 volume
// (mkfs included) and of an already formatted one, and 8 volumes staged concurrently vs. one by
// one. Needs root.
//
//   node_bench [--repeats N] [--fs-type ext4|xfs]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "csi.grpc.pb.h"
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
  Bench(std::string fs_type) : fs_type_(std::move(fs_type)) {
    std::filesystem::create_directories(setup_.File("sys/block"));
    setup_.args.push_back("--sysfs-root=" + setup_.File("sys"));
    setup_.args.push_back("--log-level=warn");
    plugin_ = setup_.Start();
    client_ = std::make_unique<testing::NodeClient>(setup_.socket_path());
    capability_ = testing::NodeClient::MountCapability(fs_type_);
  }

  LoopDisk& NewDisk() {
    int i = static_cast<int>(disks_.size());
    disks_.push_back(std::make_unique<LoopDisk>(setup_.File("d" + std::to_string(i) + ".img"),
                                                setup_.File("sys"), Serial(i), 1024));
    if (!disks_.back()->ok()) Die("cannot attach a loop device");
    return *disks_.back();
  }
  int disk_count() const { return static_cast<int>(disks_.size()); }

  std::string Staging(int i) const { return setup_.File("stage/" + std::to_string(i)); }
  std::string Target(int i) const { return setup_.File("pods/" + std::to_string(i)); }
  std::string Volume(int i) const { return "bench-vol-" + std::to_string(i); }

  void Stage(int i) {
    Check(client_->Stage(Volume(i), Serial(i) + "-bench", Staging(i), capability_), "stage");
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

int Run(int repeats, const std::string& fs_type) {
  Bench bench(fs_type);
  // Stage and publish volume i, record both times, then unpublish and unstage it.
  auto cycle = [&bench](int i, std::vector<double>& stage, std::vector<double>& publish) {
    auto t0 = Clock::now();
    bench.Stage(i);
    auto t1 = Clock::now();
    bench.Publish(i);
    auto t2 = Clock::now();
    stage.push_back(Ms(t1 - t0));
    publish.push_back(Ms(t2 - t1));
    bench.Unpublish(i);
    bench.Unstage(i);
  };
  std::vector<double> blank_stage, blank_publish, formatted_stage, formatted_publish;
  for (int r = 0; r < repeats; ++r) {
    bench.NewDisk();
    int i = bench.disk_count() - 1;
    cycle(i, blank_stage, blank_publish);
    cycle(i, formatted_stage, formatted_publish);
  }
  auto row = [](const char* label, const std::vector<double>& stage,
                const std::vector<double>& publish) {
    std::printf("  %-32s %8.1f %10.1f %13.1f\n", label, Median(stage), Median(publish),
                Median(stage) + Median(publish));
  };
  std::printf("1 GiB %s volume, median of %d (ms)     stage    publish   stage+publish\n",
              fs_type.c_str(), repeats);
  row("blank (mkfs included)", blank_stage, blank_publish);
  row("already formatted", formatted_stage, formatted_publish);

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
  std::printf("8 blank 1 GiB %s volumes staged (mkfs included), wall time (ms)\n", fs_type.c_str());
  std::printf("  one by one                       %8.1f\n", one_by_one);
  std::printf("  concurrently                     %8.1f   (%.2fx)\n", together,
              one_by_one / together);
  for (int i : sequential)
    bench.Unstage(i);
  for (int i : concurrent)
    bench.Unstage(i);
  return 0;
}

}  // namespace
}  // namespace oxide::bench

int main(int argc, char** argv) {
  int repeats = 5;
  std::string fs_type = "ext4";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--fs-type") == 0) fs_type = argv[i + 1];
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "node_bench needs root (loop devices, mkfs, mount)\n");
    return 2;
  }
  return oxide::bench::Run(repeats, fs_type);
}
