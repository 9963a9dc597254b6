// An async client for CreateVolume + DeleteVolume pairs (no publish) on the csi.v1 Controller
// service: C pairs in flight on one CompletionQueue polled by the RunPairs() thread; no retries,
// a failed call ends its pair and is counted. The same requests for any CSI driver.
#pragma once

#include <grpcpp/channel.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace oxide::bench {

struct PairOptions {
  int pairs = 0;
  int concurrency = 16;
  std::string name_prefix = "pair-vol-";
  std::chrono::milliseconds deadline{60000};  // of each call
  uint64_t size_bytes = uint64_t{1} << 30;
};

struct PairResult {
  int ok = 0;      // pairs whose both calls succeeded
  int failed = 0;  // pairs ended by an error
  double wall_s = 0;
  std::vector<double> pair_ms, create_ms, delete_ms;  // of successful calls and pairs
  std::map<std::string, uint64_t> errors;             // "CreateVolume <code>" → count
  std::map<std::string, std::string> examples;        // the first message of each
};

// Runs `options.pairs` pairs, `options.concurrency` at a time. Each CreateVolume asks for
// size_bytes and one SINGLE_NODE_WRITER mount capability (ext4); DeleteVolume gets the id it
// answered.
PairResult RunPairs(const std::shared_ptr<grpc::Channel>& channel, const PairOptions& options);

}  // namespace oxide::bench
