// Test support: a synchronous client of the CSI Node service on a unix socket, with one call
// per RPC built from the few fields tests vary, and the usual volume capabilities. Used by the
// node tests and node_bench; one client may be shared by threads (gRPC stubs are thread-safe).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "csi.grpc.pb.h"

namespace oxide::testing {

class NodeClient {
 public:
  NodeClient() = default;
  explicit NodeClient(const std::string& socket_path) { Connect(socket_path); }
  // (Re)connects to the plugin at `socket_path`.
  void Connect(const std::string& socket_path);

  static csi::v1::VolumeCapability MountCapability(const std::string& fs_type = "",
                                                   std::vector<std::string> flags = {});
  static csi::v1::VolumeCapability BlockCapability();

  // `disk_name` goes into publish_context as diskName, its first 20 bytes as nvmeSerial (left
  // out when `disk_name` is empty).
  grpc::Status Stage(const std::string& volume_id, const std::string& disk_name,
                     const std::string& staging, const csi::v1::VolumeCapability& capability);
  // The same with a volume_context and NodeStage secrets.
  grpc::Status Stage(const std::string& volume_id, const std::string& disk_name,
                     const std::string& staging, const csi::v1::VolumeCapability& capability,
                     const std::map<std::string, std::string>& volume_context,
                     const std::map<std::string, std::string>& secrets);
  // The same with `volume_context` (diskName is not added to it).
  grpc::Status Stage(const std::string& volume_id, const std::string& disk_name,
                     const std::string& staging, const csi::v1::VolumeCapability& capability,
                     const std::map<std::string, std::string>& volume_context);
  grpc::Status Unstage(const std::string& volume_id, const std::string& staging);
  grpc::Status Publish(const std::string& volume_id, const std::string& staging,
                       const std::string& target, const csi::v1::VolumeCapability& capability,
                       bool readonly = false);
  grpc::Status Unpublish(const std::string& volume_id, const std::string& target);
  grpc::Status Stats(const std::string& volume_id, const std::string& path,
                     csi::v1::NodeGetVolumeStatsResponse* response);
  csi::v1::Node::Stub& stub() { return *stub_; }

 private:
  std::unique_ptr<csi::v1::Node::Stub> stub_;
};

}  // namespace oxide::testing
