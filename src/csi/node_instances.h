// The Oxide instance behind a CSI node id, and the node ids to report for an instance. A node id
// is an instance id (UUID) or "name:<instance name>" (a Kubernetes Node without providerID, see
// node/instance_identity.h): a name is looked up in the project (GET /v1/instances/{name}). The
// names learnt (id -> name) are kept in a small cache so that ListVolumes and ControllerGetVolume
// can report both forms in published_node_ids (the external-attacher looks for the CO's node id
// there); an instance the cache does not know is looked up once. Loop thread only; every Oxide
// call goes through OxideClient callbacks.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backend/oxide_client.h"
#include "loop/loop_affinity.h"

namespace oxide::csi_adapter {

class NodeInstances {
 public:
  // `oxide` outlives this object.
  explicit NodeInstances(backend::OxideClient* oxide) : oxide_(oxide) {}
  // Lookups still in flight are then dropped uncalled.
  ~NodeInstances() { *alive_ = false; }
  NodeInstances(const NodeInstances&) = delete;
  NodeInstances& operator=(const NodeInstances&) = delete;

  // The instance id `node_id` stands for: a UUID itself (lowercased), a "name:" form looked up
  // in the project: NOT_FOUND naming the instance and the node id when there is no such
  // instance. Any other form: NOT_FOUND (no such node).
  void Resolve(const std::string& node_id, backend::Done<std::string> done);

  // Every node id to report for each of `instance_ids`: the id, and "name:<name>" when its name
  // is known or can be learnt (a failed lookup leaves only the id). Calls `done` once.
  using NodeIds = std::map<std::string, std::vector<std::string>>;
  void NodeIdsOf(const std::set<std::string>& instance_ids, std::function<void(NodeIds)> done);

 private:
  NodeIds Known(const std::set<std::string>& instance_ids) const;
  void Remember(const std::string& id, const std::string& name);

  backend::OxideClient* oxide_;
  std::map<std::string, std::string> names_;  // instance id -> name
  LoopAffinity affinity_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace oxide::csi_adapter
