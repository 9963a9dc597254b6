// Snapshot benchmark (docs/performance.md "Snapshots"): S CreateSnapshot calls at once (one per
// source volume) through the real plugin, against oxide-sim answering snapshot creates at once
// with `creating` and making them ready D ms later. Prints how the calls were answered, when all
// snapshots were ready (seen in the plugin's log, so the bench adds no Oxide request), the Oxide
// requests per second while the plugin tracked the uploads, and the plugin's RSS over time.
// Flags: --snapshots S (500) --ready-delay-ms D (2000) --deadline-ms T (1000: each call's
// deadline).
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "csi.grpc.pb.h"
#include "support/bench_flags.h"
#include "support/controller_rig.h"
#include "support/temp_dir.h"
#include "support/volume_driver.h"

namespace oxide::bench {
namespace {

using namespace oxide::testing;
using Clock = std::chrono::steady_clock;

struct Flags {
  int snapshots = 500;
  int ready_delay_ms = 2000;
  int deadline_ms = 1000;
  int rounds = 2;  // the same plugin takes S more snapshots each round: RSS must not climb
};

Flags Parse(int argc, char** argv) {
  Flags flags;
  ParseIntFlags(argc, argv,
                {{"--snapshots", &flags.snapshots},
                 {"--ready-delay-ms", &flags.ready_delay_ms},
                 {"--deadline-ms", &flags.deadline_ms},
                 {"--rounds", &flags.rounds}},
                "snapshot_bench [--snapshots S] [--ready-delay-ms D] [--deadline-ms T] "
                "[--rounds R]");
  if (flags.snapshots < 1 || flags.ready_delay_ms < 0 || flags.deadline_ms < 1 ||
      flags.rounds < 1) {
    std::fprintf(stderr, "--snapshots, --deadline-ms and --rounds must be at least 1\n");
    std::exit(2);
  }
  return flags;
}

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

// Oxide requests logged after `*seen` (by sequence number), by operationId; advances `*seen`.
std::map<std::string, int> NewRequests(ControllerRig& rig, uint64_t* seen) {
  nlohmann::json log;
  rig.Control("GET", "/__sim/requests", nullptr, &log);
  std::map<std::string, int> counts;
  if (!log.is_object()) return counts;
  uint64_t newest = *seen;
  for (const nlohmann::json& request : log["requests"]) {
    uint64_t seq = request.value("seq", uint64_t{0});
    if (seq <= *seen) continue;
    newest = std::max(newest, seq);
    ++counts[request.value("operation", "?")];
  }
  *seen = newest;
  return counts;
}

struct Answers {
  int ready = 0, not_ready = 0, failed = 0;
  std::map<std::string, int> errors;
  std::vector<double> latency_ms;
};

// All calls at once on one completion queue.
Answers SnapshotAll(const std::shared_ptr<grpc::Channel>& channel,
                    const std::vector<std::string>& sources, int deadline_ms, int round) {
  auto stub = csi::v1::Controller::NewStub(channel);
  grpc::CompletionQueue queue;
  struct Call {
    grpc::ClientContext context;
    csi::v1::CreateSnapshotResponse response;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<csi::v1::CreateSnapshotResponse>> reader;
    Clock::time_point started;
  };
  std::vector<std::unique_ptr<Call>> calls;
  for (size_t i = 0; i < sources.size(); ++i) {
    auto call = std::make_unique<Call>();
    csi::v1::CreateSnapshotRequest request;
    request.set_name("bench-snapshot-" + std::to_string(round) + "-" + std::to_string(i));
    request.set_source_volume_id(sources[i]);
    call->context.set_deadline(std::chrono::system_clock::now() +
                               std::chrono::milliseconds(deadline_ms));
    call->started = Clock::now();
    call->reader = stub->AsyncCreateSnapshot(&call->context, request, &queue);
    call->reader->Finish(&call->response, &call->status, call.get());
    calls.push_back(std::move(call));
  }
  Answers answers;
  for (size_t done = 0; done < calls.size(); ++done) {
    void* tag = nullptr;
    bool ok = false;
    if (!queue.Next(&tag, &ok)) break;
    auto* call = static_cast<Call*>(tag);
    answers.latency_ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - call->started).count());
    if (!call->status.ok()) {
      ++answers.failed;
      ++answers
            .errors[std::to_string(call->status.error_code()) + " " + call->status.error_message()];
    } else if (call->response.snapshot().ready_to_use()) {
      ++answers.ready;
    } else {
      ++answers.not_ready;
    }
  }
  queue.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
  }
  return answers;
}

// Source disks made directly in Oxide (synchronously, before creates become slow).
std::vector<std::string> MakeSources(ControllerRig& rig, int count, int round) {
  std::vector<std::string> sources;
  for (int i = 0; i < count; ++i) {
    nlohmann::json disk;
    nlohmann::json body = {
        {"name", "bench-source-" + std::to_string(round) + "-" + std::to_string(i)},
        {"description", ""},
        {"size", int64_t{1} << 30},
        {"disk_backend",
         {{"type", "distributed"}, {"disk_source", {{"type", "blank"}, {"block_size", 4096}}}}}};
    if (rig.Control("POST", "/v1/disks?project=bench", body, &disk) != 201) {
      std::fprintf(stderr, "cannot create source disk %d: %s\n", i, disk.dump().c_str());
      std::exit(1);
    }
    sources.push_back(disk["id"].get<std::string>());
  }
  return sources;
}

// One round: S CreateSnapshot calls at once, then the wait until the plugin saw all ready.
bool MeasureRound(ControllerRig& rig, PluginProcess& plugin,
                  const std::shared_ptr<grpc::Channel>& channel, const Flags& flags, int round) {
  rig.Control("PUT", "/__sim/config", {{"async", false}, {"create_delay_ms", 0}}, nullptr);
  std::vector<std::string> sources = MakeSources(rig, flags.snapshots, round);
  rig.Control("PUT", "/__sim/config", {{"async", true}, {"create_delay_ms", flags.ready_delay_ms}},
              nullptr);
  const size_t settled_before =
      Occurrences(ReadFile(rig.plugin().log_path()), "snapshot upload settled");
  const long rss_before = ProcessStatusKiB(plugin.pid(), "VmRSS");
  uint64_t seen = 0;
  NewRequests(rig, &seen);

  // Sampled every 250 ms while the calls run and the uploads are tracked.
  std::vector<std::pair<double, long>> rss_samples;
  std::vector<std::pair<double, int>> poll_samples;  // time, snapshot GET+list requests since
  const auto started = Clock::now();
  std::atomic<double> answered_s{-1};
  double all_ready_s = -1;
  std::thread sampler([&] {
    uint64_t sampler_seen = seen;
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      const double t = std::chrono::duration<double>(Clock::now() - started).count();
      rss_samples.emplace_back(t, ProcessStatusKiB(plugin.pid(), "VmRSS"));
      std::map<std::string, int> fresh = NewRequests(rig, &sampler_seen);
      poll_samples.emplace_back(t, fresh["snapshot_view"] + fresh["snapshot_list"]);
      const size_t settled =
          Occurrences(ReadFile(rig.plugin().log_path()), "snapshot upload settled");
      if (all_ready_s < 0 && settled - settled_before >= static_cast<size_t>(flags.snapshots)) {
        all_ready_s = t;
      }
      if (all_ready_s >= 0 && answered_s >= 0 && t > all_ready_s + 2.0) break;  // 2 quiet s
      if (t > 120) break;
    }
  });
  Answers answers = SnapshotAll(channel, sources, flags.deadline_ms, round);
  answered_s = std::chrono::duration<double>(Clock::now() - started).count();
  sampler.join();
  std::map<std::string, int> total = NewRequests(rig, &seen);
  const long rss_end = ProcessStatusKiB(plugin.pid(), "VmRSS");

  std::printf(
      "== round %d: %d snapshots requested at once; Oxide readiness delay %d ms; call "
      "deadline %d ms ==\n",
      round, flags.snapshots, flags.ready_delay_ms, flags.deadline_ms);
  std::printf(
      "answers: %d ready_to_use=true, %d ready_to_use=false, %d errors; all answered "
      "after %.2f s; latency p50 %.0f ms, p99 %.0f ms\n",
      answers.ready, answers.not_ready, answers.failed, answered_s.load(),
      Quantile(answers.latency_ms, 0.5), Quantile(answers.latency_ms, 0.99));
  for (const auto& [error, count] : answers.errors)
    std::printf("  error x%d: %s\n", count, error.c_str());
  if (all_ready_s >= 0) {
    std::printf("all %d snapshots ready (plugin log) after %.2f s\n", flags.snapshots, all_ready_s);
  } else {
    std::printf("NOT all snapshots became ready within the run\n");
  }
  int polls = 0, peak_per_second = 0;
  std::map<int, int> per_second;
  for (const auto& [t, count] : poll_samples) {
    polls += count;
    per_second[static_cast<int>(t)] += count;
  }
  for (const auto& [second, count] : per_second)
    peak_per_second = std::max(peak_per_second, count);
  std::printf("Oxide requests in the round:");
  int requests = 0;
  for (const auto& [operation, count] : total) {
    std::printf(" %s=%d", operation.c_str(), count);
    requests += count;
  }
  std::printf(" (total %d)\n", requests);
  std::printf(
      "upload polling: %d snapshot GET/list requests until all were ready, peak %d in "
      "one second (one GET per snapshot per poll would be %d per poll)\n",
      polls, peak_per_second, flags.snapshots);
  std::printf("  per second:");
  for (const auto& [second, count] : per_second)
    std::printf(" [%ds]=%d", second, count);
  std::printf("\n");
  long rss_peak = rss_before, rss_polling_peak = 0;
  for (const auto& [t, rss] : rss_samples) {
    rss_peak = std::max(rss_peak, rss);
    if (t > answered_s) rss_polling_peak = std::max(rss_polling_peak, rss);
  }
  std::printf(
      "plugin RSS: before %.1f MiB, sampled peak %.1f MiB, peak while only polling "
      "%.1f MiB, at the end %.1f MiB\n",
      MiB(rss_before), MiB(rss_peak), MiB(rss_polling_peak), MiB(rss_end));
  return all_ready_s >= 0 && answers.failed == 0;
}

int Run(const Flags& flags) {
  ControllerRig rig("bench", {});
  if (!rig.sim().running()) return 1;
  auto plugin = rig.LaunchPlugin();
  if (!plugin->WaitServing(rig.plugin().socket_path())) {
    std::fprintf(stderr, "the plugin did not start; its log:\n%s\n", plugin->Log().c_str());
    return 1;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto channel = ReconnectingUnixChannel(rig.plugin().socket_path());
  channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10));
  std::printf("plugin RSS idle: %.1f MiB\n", MiB(ProcessStatusKiB(plugin->pid(), "VmRSS")));
  bool ok = true;
  for (int round = 1; round <= flags.rounds; ++round)
    ok = MeasureRound(rig, *plugin, channel, flags, round) && ok;

  // What ListSnapshots says at the end (through the plugin, every page).
  auto stub = csi::v1::Controller::NewStub(channel);
  int entries = 0, ready = 0;
  std::string token;
  do {
    grpc::ClientContext context;
    csi::v1::ListSnapshotsRequest request;
    request.set_starting_token(token);
    csi::v1::ListSnapshotsResponse listed;
    grpc::Status status = stub->ListSnapshots(&context, request, &listed);
    if (!status.ok()) {
      std::printf("ListSnapshots failed: %s\n", status.error_message().c_str());
      ok = false;
      break;
    }
    for (const auto& entry : listed.entries()) {
      ++entries;
      ready += entry.snapshot().ready_to_use();
    }
    token = listed.next_token();
  } while (!token.empty());
  std::printf("ListSnapshots at the end: %d snapshots, %d ready_to_use\n", entries, ready);
  std::printf("plugin VmHWM: %.1f MiB\n", MiB(ProcessStatusKiB(plugin->pid(), "VmHWM")));
  plugin->Signal(SIGTERM);
  plugin->WaitExit();
  return ok && ready == entries ? 0 : 1;
}

}  // namespace
}  // namespace oxide::bench

int main(int argc, char** argv) {
  return oxide::bench::Run(oxide::bench::Parse(argc, argv));
}
