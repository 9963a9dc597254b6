// Memory under hostile requests: `--calls` concurrent CreateVolume calls, each with a name of
// `--name-bytes` (all to be refused), from `--connections` client connections, against the real
// plugin in controller mode (oxide-sim behind it). Prints the plugin's RSS at idle, its peak
// (VmHWM) and its RSS `--settle-s` seconds after the last answer, and the answers by code. Each
// row is one burst size, so the figure covers the range from a handful of calls to the target.
//
//   request_memory_bench [--calls 2000] [--name-bytes 1048576] [--connections 8] [--settle-s 10]
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "csi.grpc.pb.h"
#include "machine_speed.h"
#include "support/controller_rig.h"

namespace oxide::bench {
namespace {

using testing::ControllerRig;
using testing::ProcessStatusKiB;

struct Flags {
  int calls = 2000;
  size_t name_bytes = 1 << 20;
  int connections = 8;
  int settle_s = 10;
};

Flags Parse(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    long value = std::strtol(argv[i + 1], nullptr, 10);
    if (flag == "--calls") flags.calls = static_cast<int>(value);
    if (flag == "--name-bytes") flags.name_bytes = static_cast<size_t>(value);
    if (flag == "--connections") flags.connections = static_cast<int>(value);
    if (flag == "--settle-s") flags.settle_s = static_cast<int>(value);
  }
  return flags;
}

double MiB(long kib) {
  return static_cast<double>(kib) / 1024.0;
}

// Sends `calls` CreateVolume requests at once over `connections` connections; counts answers.
std::map<std::string, int> Burst(const std::string& socket, const Flags& flags, int calls) {
  std::vector<std::unique_ptr<csi::v1::Controller::Stub>> stubs;
  for (int i = 0; i < flags.connections; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("oxide.bench.connection", i);  // distinct arguments: a connection of its own
    args.SetMaxSendMessageSize(-1);
    stubs.push_back(csi::v1::Controller::NewStub(
        grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args)));
  }
  csi::v1::CreateVolumeRequest request;
  request.set_name(std::string(flags.name_bytes, 'n'));
  auto* capability = request.add_volume_capabilities();
  capability->mutable_mount()->set_fs_type("ext4");
  capability->mutable_access_mode()->set_mode(
      csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);

  struct Call {
    grpc::ClientContext context;
    csi::v1::CreateVolumeResponse response;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<csi::v1::CreateVolumeResponse>> reader;
  };
  grpc::CompletionQueue cq;
  std::vector<std::unique_ptr<Call>> all;
  for (int i = 0; i < calls; ++i) {
    auto call = std::make_unique<Call>();
    call->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    call->reader = stubs[i % stubs.size()]->AsyncCreateVolume(&call->context, request, &cq);
    call->reader->Finish(&call->response, &call->status, call.get());
    all.push_back(std::move(call));
  }
  std::map<std::string, int> codes;
  for (int done = 0; done < calls; ++done) {
    void* tag = nullptr;
    bool ok = false;
    if (!cq.Next(&tag, &ok)) break;
    auto* call = static_cast<Call*>(tag);
    std::string code = std::to_string(call->status.error_code());
    if (call->status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) code = "INVALID_ARGUMENT";
    if (call->status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      code = "RESOURCE_EXHAUSTED";
    }
    if (call->status.ok()) code = "OK";
    ++codes[code];
  }
  cq.Shutdown();
  return codes;
}

int Run(const Flags& flags) {
  std::printf("machine speed reference: %.1f ms (sort of 1 Mi values; lower is faster)\n",
              ReferenceWorkMs());
  ControllerRig rig("bench", {});
  if (!rig.sim().running()) return 1;
  auto plugin = rig.LaunchPlugin();
  if (!plugin->WaitServing(rig.plugin().socket_path())) {
    std::fprintf(stderr, "the plugin did not start; its log:\n%s\n", plugin->Log().c_str());
    return 1;
  }
  // Benchmark pacing, not a test: let the start-up's allocations settle before the idle figure.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const long idle = ProcessStatusKiB(plugin->pid(), "VmRSS");
  std::printf("plugin idle RSS %.1f MiB; requests with a %zu-byte name from %d connections\n",
              MiB(idle), flags.name_bytes, flags.connections);
  std::printf("%8s %14s %14s %18s  %s\n", "calls", "peak RSS MiB", "peak - idle",
              "RSS after settle", "answers");
  bool ok = true;
  for (int calls : {10, 200, flags.calls}) {
    std::map<std::string, int> codes = Burst(rig.plugin().socket_path(), flags, calls);
    const long peak = ProcessStatusKiB(plugin->pid(), "VmHWM");
    std::this_thread::sleep_for(std::chrono::seconds(flags.settle_s));
    const long after = ProcessStatusKiB(plugin->pid(), "VmRSS");
    std::string answers;
    int answered = 0;
    for (const auto& [code, count] : codes) {
      answers += code + "=" + std::to_string(count) + " ";
      answered += count;
    }
    std::printf("%8d %14.1f %14.1f %12.1f (%+.1f) %s\n", calls, MiB(peak), MiB(peak - idle),
                MiB(after), MiB(after - idle), answers.c_str());
    ok = ok && answered == calls && codes.count("OK") == 0 && plugin->running();
  }
  std::printf("peak is the plugin's VmHWM since its start (it only grows down the table)\n");
  plugin->Signal(SIGTERM);
  plugin->WaitExit();
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace oxide::bench

int main(int argc, char** argv) {
  return oxide::bench::Run(oxide::bench::Parse(argc, argv));
}
