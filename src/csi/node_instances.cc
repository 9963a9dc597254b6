#include "csi/node_instances.h"

#include "config/validation.h"

namespace oxide::csi_adapter {
namespace {

// More instances than a project plausibly holds; past it the cache starts over (a name is looked
// up again at the next listing) rather than grow without bound.
constexpr size_t kMostNamesKept = 4096;

}  // namespace

void NodeInstances::Resolve(const std::string& node_id, backend::Done<std::string> done) {
  affinity_.Check("NodeInstances::Resolve");
  if (IsUuid(node_id)) return done(ToLower(node_id));
  std::optional<std::string> name = InstanceNameOfNodeId(node_id);
  if (!name) {
    return done(NotFound("node " + node_id +
                         " does not exist: node ids are Oxide instance ids (UUIDs) or "
                         "name:<instance name>"));
  }
  oxide_->GetInstance(*name, [this, alive = alive_, node_id, name = *name,
                              done = std::move(done)](StatusOr<backend::Instance> instance) {
    if (!*alive) return;
    if (!instance.ok()) {
      if (instance.status().code() == StatusCode::kNotFound) {
        return done(NotFound("node " + node_id + " does not exist: there is no instance named " +
                             name + " in the project"));
      }
      return done(instance.status().WithMessage("cannot look up instance " + name + " (node " +
                                                node_id + "): " + instance.status().message()));
    }
    Remember(instance->id, instance->name);
    done(instance->id);
  });
}

void NodeInstances::NodeIdsOf(const std::set<std::string>& instance_ids,
                              std::function<void(NodeIds)> done) {
  affinity_.Check("NodeInstances::NodeIdsOf");
  std::vector<std::string> unknown;
  for (const std::string& id : instance_ids) {
    if (names_.count(id) == 0) unknown.push_back(id);
  }
  if (unknown.empty()) return done(Known(instance_ids));
  // One lookup per unknown instance, all at once; the answer when the last one is back.
  auto pending = std::make_shared<size_t>(unknown.size());
  auto finish = std::make_shared<std::function<void(NodeIds)>>(std::move(done));
  for (const std::string& id : unknown) {
    oxide_->GetInstance(id, [this, alive = alive_, instance_ids, pending,
                             finish](StatusOr<backend::Instance> instance) {
      if (!*alive) return;
      // A failed lookup (an instance deleted meanwhile, Oxide unreachable) leaves the id alone.
      if (instance.ok()) Remember(instance->id, instance->name);
      if (--*pending == 0) (*finish)(Known(instance_ids));
    });
  }
}

NodeInstances::NodeIds NodeInstances::Known(const std::set<std::string>& instance_ids) const {
  NodeIds ids;
  for (const std::string& id : instance_ids) {
    std::vector<std::string>& forms = ids[id];
    forms.push_back(id);
    auto name = names_.find(id);
    if (name != names_.end()) forms.push_back(NodeIdForInstanceName(name->second));
  }
  return ids;
}

void NodeInstances::Remember(const std::string& id, const std::string& name) {
  if (names_.size() >= kMostNamesKept && names_.count(id) == 0) names_.clear();
  names_[id] = name;
}

}  // namespace oxide::csi_adapter
