#include "control_call.h"

#include <algorithm>
#include <stdexcept>

#include "ids.h"

namespace oxide_sim {
namespace {

const std::vector<std::string> kRunStates = {"creating", "starting",  "running",   "stopping",
                                             "stopped",  "rebooting", "migrating", "repairing",
                                             "failed",   "destroyed"};

}  // namespace

HttpResponse control_json(int status, const nlohmann::json& body) {
  return json_response(status, body.dump());
}

HttpResponse ordered_control_json(int status, const nlohmann::ordered_json& body) {
  return json_response(status, body.dump());
}

HttpResponse control_error(int status, const std::string& message) {
  return control_json(status, {{"message", message}});
}

nlohmann::ordered_json instance_view(const Instance& instance) {
  nlohmann::ordered_json out = to_api_json(instance);
  out["guest_local"] = instance.guest_local;
  out["guest_sysfs_root"] = instance.guest_sysfs_root.empty()
                                ? nlohmann::ordered_json(nullptr)
                                : nlohmann::ordered_json(instance.guest_sysfs_root);
  out["guest_device_order"] = instance.guest_device_order;
  return out;
}

std::string require_string(const nlohmann::json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || !it->is_string()) {
    throw std::invalid_argument(std::string("\"") + key + "\" (string) is required");
  }
  return it->get<std::string>();
}

void check_name(const std::string& name) {
  if (oxide::Status valid = ValidateName(name); !valid.ok()) {
    throw std::invalid_argument(valid.message());
  }
}

void check_run_state(const std::string& state) {
  if (std::find(kRunStates.begin(), kRunStates.end(), state) == kRunStates.end()) {
    throw std::invalid_argument("unknown run_state \"" + state + "\"");
  }
}

Instance* find_instance(Model& model, const std::string& selector) {
  Instance* instance = model.instance(canonical_uuid(selector));
  for (auto& [id, candidate] : model.instances) {
    if (instance == nullptr && candidate.name == selector) instance = &candidate;
  }
  return instance;
}

}  // namespace oxide_sim
