// The control API's endpoints about the simulator itself: the state dump, the manual clock, the
// accepted tokens, reset, timing and quotas, fault injection and the request log.
#include <stdexcept>

#include "clock.h"
#include "control_handlers.h"
#include "guest_devices.h"

namespace oxide_sim {
namespace {

// Applies the keys `body` gives (none for a GET) and answers the whole config.
HttpResponse apply_config(Model& model, const nlohmann::json& body) {
  TimingSettings& timing = model.timing;
  timing.create_delay_ms = body.value("create_delay_ms", timing.create_delay_ms);
  timing.delete_delay_ms = body.value("delete_delay_ms", timing.delete_delay_ms);
  timing.instance_delay_ms = body.value("instance_delay_ms", timing.instance_delay_ms);
  timing.async_mode = body.value("async", timing.async_mode);
  timing.hotplug = body.value("hotplug", timing.hotplug);
  model.quota.storage = body.value("storage_quota", model.quota.storage);
  model.quota.cpus = body.value("cpus_quota", model.quota.cpus);
  model.quota.memory = body.value("memory_quota", model.quota.memory);
  model.physical_disk_bytes = body.value("physical_disk_bytes", model.physical_disk_bytes);
  model.save_quota();
  return control_json(200, {{"create_delay_ms", timing.create_delay_ms},
                            {"delete_delay_ms", timing.delete_delay_ms},
                            {"instance_delay_ms", timing.instance_delay_ms},
                            {"async", timing.async_mode},
                            {"hotplug", timing.hotplug},
                            {"storage_quota", model.quota.storage},
                            {"cpus_quota", model.quota.cpus},
                            {"memory_quota", model.quota.memory},
                            {"physical_disk_bytes", model.physical_disk_bytes}});
}

// The 404 of a sub-path of /__sim/clock or /__sim/auth the endpoint does not know.
HttpResponse no_such_sub_endpoint(const ControlCall& call) {
  const std::vector<std::string>& segments = call.segments;
  return control_error(404, "no such control endpoint: " + call.method + " /__sim/" + segments[1] +
                                (segments.size() > 2 ? "/" + segments[2] : ""));
}

}  // namespace

HttpResponse get_state(const ControlCall& call) {
  Services& services = call.context.services;
  nlohmann::ordered_json out;
  for (const char* kind : {"projects", "disks", "snapshots", "instances"}) {
    out[kind] = nlohmann::ordered_json::array();
  }
  for (const auto& [id, object] : services.model.projects)
    out["projects"].push_back(to_api_json(object));
  for (const auto& [id, object] : services.model.disks)
    out["disks"].push_back(to_api_json(object));
  for (const auto& [id, object] : services.model.snapshots)
    out["snapshots"].push_back(to_api_json(object));
  for (const auto& [id, object] : services.model.instances)
    out["instances"].push_back(instance_view(object));
  out["frozen"] = services.model.frozen;
  out["guest_devices"] = services.guest.visible_count();
  out["pending_transitions"] = services.timeline.PendingCount();
  return ordered_control_json(200, out);
}

// GET /__sim/clock, POST /__sim/clock/advance {"ms": N}: the manual clock of --manual-clock.
HttpResponse clock_endpoint(const ControlCall& call) {
  Timeline& timeline = call.context.services.timeline;
  const std::vector<std::string>& segments = call.segments;
  const bool advance = segments.size() == 3 && segments[2] == "advance" && call.method == "POST";
  if (!advance && !(segments.size() == 2 && call.method == "GET")) {
    return no_such_sub_endpoint(call);
  }
  uint64_t ran = 0;
  if (advance) {
    if (!timeline.manual_clock()) {
      return control_error(409, "the clock is not manual; start oxide-sim with --manual-clock");
    }
    auto ms = call.body.find("ms");
    if (ms == call.body.end() || !ms->is_number_unsigned()) {
      throw std::invalid_argument("\"ms\" (non-negative integer) is required");
    }
    ran = timeline.AdvanceManualClock(ms->get<uint64_t>());
    set_wall_offset_ms(static_cast<long long>(timeline.manual_now_ms()));
  }
  return control_json(200, {{"manual", timeline.manual_clock()},
                            {"now_ms", timeline.manual_now_ms()},
                            {"steps_run", ran},
                            {"pending_transitions", timeline.PendingCount()}});
}

// GET /__sim/auth/tokens, POST /__sim/auth/tokens {"tokens":[...]}: the accepted bearer tokens.
HttpResponse tokens_endpoint(const ControlCall& call) {
  AuthConfig& auth = call.context.auth;
  const std::string& method = call.method;
  const std::vector<std::string>& segments = call.segments;
  if (segments.size() != 3 || segments[2] != "tokens" || (method != "GET" && method != "POST")) {
    return no_such_sub_endpoint(call);
  }
  if (method == "POST") {
    auto tokens = call.body.find("tokens");
    if (tokens == call.body.end() || !tokens->is_array() || tokens->empty()) {
      throw std::invalid_argument("\"tokens\" (non-empty array of strings) is required");
    }
    std::vector<std::string> accepted;
    for (const auto& token : *tokens) {
      if (!token.is_string() || token.get<std::string>().rfind("oxide-token-", 0) != 0) {
        throw std::invalid_argument(
            "\"tokens\": every entry must be a string starting with \"oxide-token-\"");
      }
      accepted.push_back(token.get<std::string>());
    }
    auth.tokens = std::move(accepted);
  }
  return control_json(200, {{"tokens", auth.tokens}});
}

HttpResponse post_reset(const ControlCall& call) {
  call.context.reset();
  return control_json(200, {{"reset", true}});
}

HttpResponse get_config(const ControlCall& call) {
  return apply_config(call.context.services.model, nlohmann::json::object());
}

HttpResponse put_config(const ControlCall& call) {
  return apply_config(call.context.services.model, call.body);
}

HttpResponse get_faults(const ControlCall& call) {
  return control_json(200, call.context.faults.to_json());
}

HttpResponse put_faults(const ControlCall& call) {
  Faults& faults = call.context.faults;
  std::vector<FaultRule> rules;
  for (const auto& item : call.body.value("rules", nlohmann::json::array())) {
    rules.push_back(Faults::rule_from_json(item));
  }
  faults.configure(call.body.value("seed", faults.seed()), std::move(rules));
  return control_json(200, faults.to_json());
}

HttpResponse delete_faults(const ControlCall& call) {
  Faults& faults = call.context.faults;
  faults.configure(faults.seed(), {});
  return control_json(200, faults.to_json());
}

HttpResponse get_requests(const ControlCall& call) {
  return control_json(200, call.context.log.to_json());
}

HttpResponse delete_requests(const ControlCall& call) {
  call.context.log.clear();
  return control_json(200, call.context.log.to_json());
}

}  // namespace oxide_sim
