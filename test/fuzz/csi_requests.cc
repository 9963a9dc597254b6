// Fuzz target: a CSI request as a CO could send it (protobuf bytes) through everything this
// plugin does before a handler looks at state: parsing, the CSI size limits, id canonicalisation,
// the RPC's own checks (engine/request_checks.h) and the request fingerprint. The first byte picks
// the RPC. Invariants: nothing crashes or throws; a refusal is never INTERNAL, has a message a
// person can read and stays short (values are echoed cut, never whole); canonicalisation is
// idempotent.
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/logging.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "csi.pb.h"
#include "csi/request_checks.h"
#include "fuzz_target.h"
#include "rpc/canonical_ids.h"
#include "rpc/size_limits.h"

namespace {

using google::protobuf::Message;
using oxide::Status;

constexpr size_t kLongestMessage = 2048;

void ExpectReadable(const Status& status) {
  if (status.ok()) return;
  Expect(status.code() != oxide::StatusCode::kInternal);  // bad input is never INTERNAL
  Expect(!status.message().empty());
  Expect(status.message().size() <= kLongestMessage);
}

template <typename Request>
void Run(const uint8_t* data, size_t size, const std::function<Status(const Request&)>& check) {
  Request request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;  // gRPC answers INTERNAL
  if (Status limits = oxide::rpc::CheckSizeLimits(request); !limits.ok()) {
    ExpectReadable(limits);
    return;
  }
  oxide::rpc::CanonicalizeIds(&request);
  const std::string canonical = request.SerializeAsString();
  oxide::rpc::CanonicalizeIds(&request);
  Expect(request.SerializeAsString() == canonical);
  ExpectReadable(check(request));
  Expect(!oxide::csi_adapter::RequestFingerprint(request).empty());
}

template <typename Request, typename Checks>
std::function<void(const uint8_t*, size_t)> Target(Checks checks) {
  return [checks](const uint8_t* data, size_t size) {
    Run<Request>(data, size, [checks](const Request& request) -> Status {
      auto checked = checks(request);
      if constexpr (std::is_same_v<decltype(checked), Status>) {
        return checked;
      } else {
        return checked.status();
      }
    });
  };
}

const std::vector<std::function<void(const uint8_t*, size_t)>>& Targets() {
  namespace v1 = csi::v1;
  using namespace oxide::csi_adapter;
  static const auto* targets = new std::vector<std::function<void(const uint8_t*, size_t)>>{
      Target<v1::CreateVolumeRequest>([](const v1::CreateVolumeRequest& r) {
        return CheckCreateVolume(r, "oxide", 10 * kGiB);
      }),
      Target<v1::DeleteVolumeRequest>(CheckDeleteVolume),
      Target<v1::ControllerPublishVolumeRequest>(CheckControllerPublishVolume),
      Target<v1::ControllerUnpublishVolumeRequest>(CheckControllerUnpublishVolume),
      Target<v1::ValidateVolumeCapabilitiesRequest>(CheckValidateVolumeCapabilities),
      Target<v1::ControllerGetVolumeRequest>(CheckControllerGetVolume),
      Target<v1::ListVolumesRequest>(CheckListVolumes),
      Target<v1::GetCapacityRequest>(CheckGetCapacity),
      Target<v1::CreateSnapshotRequest>(CheckCreateSnapshot),
      Target<v1::DeleteSnapshotRequest>(CheckDeleteSnapshot),
      Target<v1::ListSnapshotsRequest>(CheckListSnapshots),
      Target<v1::GetSnapshotRequest>(CheckGetSnapshot),
      Target<v1::NodeStageVolumeRequest>(CheckNodeStageVolume),
      Target<v1::NodeUnstageVolumeRequest>(CheckNodeUnstageVolume),
      Target<v1::NodePublishVolumeRequest>(CheckNodePublishVolume),
      Target<v1::NodeUnpublishVolumeRequest>(CheckNodeUnpublishVolume),
      Target<v1::NodeGetVolumeStatsRequest>(CheckNodeGetVolumeStats),
  };
  return *targets;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Invalid UTF-8 makes protobuf log a line per input; gRPC answers it INTERNAL before us.
  static const bool quiet = [] { return google::protobuf::SetLogHandler(nullptr), true; }();
  (void)quiet;
  if (size == 0) return 0;
  const auto& targets = Targets();
  targets[data[0] % targets.size()](data + 1, size - 1);
  return 0;
}
