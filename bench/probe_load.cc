#include "probe_load.h"

#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "csi.grpc.pb.h"

namespace oxide::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct ProbeCall {
  grpc::ClientContext context;
  csi::v1::ProbeResponse response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<csi::v1::ProbeResponse>> reader;
  Clock::time_point started;
};

void Issue(csi::v1::Identity::Stub* stub, grpc::CompletionQueue* cq) {
  auto* call = new ProbeCall;
  call->started = Clock::now();
  call->reader = stub->PrepareAsyncProbe(&call->context, csi::v1::ProbeRequest(), cq);
  call->reader->StartCall();
  call->reader->Finish(&call->response, &call->status, call);
}

double Percentile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t index =
      std::min(sorted.size() - 1, static_cast<size_t>(q * static_cast<double>(sorted.size())));
  return sorted[index];
}

}  // namespace

LoadResult RunProbeLoad(std::shared_ptr<grpc::Channel> channel, int concurrency, int threads,
                        std::chrono::milliseconds warmup, std::chrono::milliseconds duration) {
  auto stub = csi::v1::Identity::NewStub(channel);
  grpc::CompletionQueue cq;
  std::atomic<bool> measuring{false};
  std::atomic<bool> stopping{false};
  std::mutex merge_mutex;
  std::vector<double> latencies_us;
  std::atomic<uint64_t> errors{0};

  for (int i = 0; i < concurrency; ++i)
    Issue(stub.get(), &cq);

  std::atomic<int> outstanding{concurrency};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      std::vector<double> local;
      local.reserve(1 << 20);
      void* tag = nullptr;
      bool ok = false;
      while (outstanding.load() > 0 && cq.Next(&tag, &ok)) {
        auto* call = static_cast<ProbeCall*>(tag);
        if (measuring) {
          if (call->status.ok()) {
            local.push_back(
                std::chrono::duration<double, std::micro>(Clock::now() - call->started).count());
          } else {
            ++errors;
          }
        }
        delete call;
        if (!stopping) {
          Issue(stub.get(), &cq);
        } else if (--outstanding == 0) {
          cq.Shutdown();
        }
      }
      std::lock_guard lock(merge_mutex);
      latencies_us.insert(latencies_us.end(), local.begin(), local.end());
    });
  }
  std::this_thread::sleep_for(warmup);
  measuring = true;
  auto begin = Clock::now();
  std::this_thread::sleep_for(duration);
  measuring = false;
  auto elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  stopping = true;
  for (auto& worker : workers)
    worker.join();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok))
    delete static_cast<ProbeCall*>(tag);

  std::sort(latencies_us.begin(), latencies_us.end());
  LoadResult result;
  result.calls = latencies_us.size();
  result.errors = errors;
  result.calls_per_second = static_cast<double>(result.calls) / elapsed;
  result.p50_us = Percentile(latencies_us, 0.50);
  result.p99_us = Percentile(latencies_us, 0.99);
  result.p999_us = Percentile(latencies_us, 0.999);
  return result;
}

}  // namespace oxide::bench
