// POST /v1/instances?project=P (README §9): validation, disk attachments ("attach" by name
// or "create"), then the create saga (creating -> stopped, or -> starting -> running).
#include <cctype>

#include "api_handlers.h"
#include "clock.h"
#include "disk_rules.h"
#include "guest_devices.h"
#include "ids.h"
#include "instance_lifecycle.h"

namespace oxide_sim {
namespace {

constexpr size_t kMaxDisks = 12;

struct Attachment {
  bool create = false;
  std::string name;
  DiskCreateParams params;
};

struct InstanceParams {
  std::string name, description, hostname;
  uint64_t ncpus = 0, memory = 0;
  bool start = true;
  std::optional<Attachment> boot_disk;
  std::vector<Attachment> disks;
  std::optional<std::string> restart_policy, cpu_platform;
  bool jumbo = false;
};

oxide::StatusOr<Attachment> ReadAttachment(const nlohmann::json& value) {
  SIM_ASSIGN_OR_RETURN(ObjectReader reader, ObjectReader::Open(value, "InstanceDiskAttachment"));
  Attachment out;
  std::string type;
  SIM_ASSIGN_OR_RETURN(type, reader.Variant("type", {"create", "attach"}));
  out.create = type == "create";
  if (out.create) {
    SIM_ASSIGN_OR_RETURN(out.params, ReadDiskCreate(reader));
    out.name = out.params.name;
  } else {
    SIM_ASSIGN_OR_RETURN(out.name, reader.Name("name"));
  }
  SIM_RETURN_IF_ERROR(reader.Finish({"type"}));
  return out;
}

// The Hostname pattern of nexus-subset.json: dot-separated labels of [A-Za-z0-9-] that start
// with a letter or digit and do not end in '-'; at most 253 bytes.
bool ValidHostname(const std::string& text) {
  if (text.empty() || text.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t end = text.find('.', start);
    if (end == std::string::npos) end = text.size();
    if (end == start || !std::isalnum(static_cast<unsigned char>(text[start])) ||
        text[end - 1] == '-') {
      return false;
    }
    for (size_t i = start; i < end; ++i) {
      if (!std::isalnum(static_cast<unsigned char>(text[i])) && text[i] != '-') return false;
    }
    if (end == text.size()) return true;
    start = end + 1;
  }
}

oxide::StatusOr<InstanceParams> ReadInstanceCreate(const nlohmann::json& body) {
  SIM_ASSIGN_OR_RETURN(ObjectReader reader, ObjectReader::Open(body, "InstanceCreate"));
  InstanceParams params;
  SIM_ASSIGN_OR_RETURN(params.name, reader.Name("name"));
  SIM_ASSIGN_OR_RETURN(params.description, reader.Description("description"));
  SIM_ASSIGN_OR_RETURN(params.hostname, reader.String("hostname"));
  if (!ValidHostname(params.hostname)) {
    return BodyError("invalid hostname \"" + params.hostname + "\": must be a RFC 1035 hostname");
  }
  SIM_ASSIGN_OR_RETURN(params.ncpus, reader.U64("ncpus", "u16"));
  SIM_ASSIGN_OR_RETURN(params.memory, reader.U64("memory"));
  SIM_ASSIGN_OR_RETURN(params.start, reader.Boolean("start", true));
  if (reader.Has("boot_disk")) {
    SIM_ASSIGN_OR_RETURN(params.boot_disk, ReadAttachment(*reader.Raw("boot_disk")));
  }
  if (const nlohmann::json* disks = reader.Raw("disks"); disks != nullptr && !disks->is_null()) {
    if (!disks->is_array()) {
      return BodyError("invalid type: " + DescribeUnexpected(*disks) + ", expected a sequence");
    }
    for (const auto& item : *disks) {
      SIM_ASSIGN_OR_RETURN(Attachment attachment, ReadAttachment(item));
      params.disks.push_back(std::move(attachment));
    }
  }
  if (reader.Has("auto_restart_policy")) {
    SIM_ASSIGN_OR_RETURN(params.restart_policy, CheckVariant(*reader.Raw("auto_restart_policy"),
                                                             {"never", "best_effort"}));
  }
  if (reader.Has("cpu_platform")) {
    SIM_ASSIGN_OR_RETURN(
        params.cpu_platform,
        CheckVariant(*reader.Raw("cpu_platform"), {"amd_milan", "amd_turin", "amd_turin_v2"}));
  }
  SIM_ASSIGN_OR_RETURN(params.jumbo, reader.Boolean("enable_jumbo_frames", false));
  SIM_RETURN_IF_ERROR(reader.Finish({"network_interfaces", "external_ips", "ssh_public_keys",
                                     "user_data", "anti_affinity_groups", "multicast_groups"}));
  return params;
}

// What the attachments ask for, checked before anything changes: the disks to create (planned
// against the quota together) and the existing detached disks to attach.
struct AttachPlan {
  std::vector<Disk> new_disks;
  std::vector<std::string> attach_ids;
};

ApiStatus PlanAttachments(Model& model, const Project& project, const std::vector<Attachment>& all,
                          AttachPlan* plan) {
  uint64_t planned = 0;
  for (const Attachment& item : all) {
    if (item.create) {
      plan->new_disks.push_back(plan_new_disk(model, project, item.params, planned));
      planned += item.params.size;
      continue;
    }
    const Disk* disk = model.disk_named(project.id, item.name);
    if (disk == nullptr) return object_not_found("disk", true, item.name);
    if (disk->state != "detached") {
      return invalid_request("cannot attach disk \"" + disk->name + "\": " +
                             (disk_state_has_instance(disk->state)
                                  ? std::string("disk is attached to another instance")
                                  : "invalid state " + disk->state));
    }
    plan->attach_ids.push_back(disk->id);
  }
  return ApiStatus::Ok();
}

Instance NewInstance(const InstanceParams& params, const Project& project) {
  Instance instance;
  instance.id = new_uuid();
  instance.name = params.name;
  instance.description = params.description;
  instance.project_id = project.id;
  instance.hostname = params.hostname;
  instance.ncpus = static_cast<uint32_t>(params.ncpus);
  instance.memory = params.memory;
  instance.run_state = "creating";
  instance.auto_restart_policy = params.restart_policy;
  instance.cpu_platform = params.cpu_platform;
  instance.enable_jumbo_frames = params.jumbo;
  instance.time_created = now_rfc3339();
  instance.time_modified = instance.time_created;
  instance.time_run_state_updated = instance.time_created;
  return instance;
}

// Stores the instance with its disks attached (the new ones created), in one write batch.
void SaveWithDisks(Services& services, const Project& project, const InstanceParams& params,
                   AttachPlan plan, Instance& instance) {
  Model& model = services.model;
  WriteBatch batch(model.store());
  for (Disk disk : plan.new_disks) {
    disk.state = "attached";
    disk.instance_id = instance.id;
    model.put(disk);
    services.guest.disk_created(disk, std::nullopt);
    plan.attach_ids.push_back(disk.id);
  }
  for (const std::string& id : plan.attach_ids) {
    Disk& disk = model.disks.at(id);
    disk.state = "attached";
    disk.instance_id = instance.id;
    disk.time_modified = instance.time_created;
    model.put(disk);
  }
  if (params.boot_disk) {
    instance.boot_disk_id = model.disk_named(project.id, params.boot_disk->name)->id;
  }
  model.put(instance);
}

// The create saga: after the instance delay, creating -> stopped, or -> starting -> running.
// Answers 201 at once in async mode, else when the saga's first step has run.
void RunCreateSaga(Services& services, const CallPtr& call, const Instance& instance, bool start) {
  Model& model = services.model;
  const bool async = model.timing.async_mode;
  if (async) call->RespondJson(201, to_api_json(instance));
  const std::string id = instance.id;
  services.timeline.Run(model.timing.instance_delay_ms, {"instance", id, instance.name},
                        [&services, call, id, start, async]() {
                          Instance* current = services.model.instance(id);
                          if (current == nullptr || current->run_state != "creating") {
                            if (!async) call->RespondError(internal_error());
                            return;
                          }
                          set_run_state(services, *current, start ? "starting" : "stopped");
                          const nlohmann::ordered_json created = to_api_json(*current);
                          if (start) schedule_run_state(services, id, "starting", "running");
                          if (!async) call->RespondJson(201, created);
                        });
}

// The boot disk first, then the others.
std::vector<Attachment> AllAttachments(const InstanceParams& params) {
  std::vector<Attachment> all;
  all.reserve(params.disks.size() + 1);
  if (params.boot_disk) all.push_back(*params.boot_disk);
  all.insert(all.end(), params.disks.begin(), params.disks.end());
  return all;
}

}  // namespace

ApiStatus instance_create(Services& services, const CallPtr& call) {
  SIM_ASSIGN_OR_RETURN(const NameOrId project_selector, RequiredQueryProject(*call));
  SIM_ASSIGN_OR_RETURN(const nlohmann::json body, BodyJson(*call));
  SIM_ASSIGN_OR_RETURN(const InstanceParams params, BodyField(ReadInstanceCreate(body)));
  SIM_RETURN_IF_ERROR(Authenticate(services, *call));
  Model& model = services.model;
  const Project& project = model.select_project(project_selector);
  check_instance_size(params.ncpus, params.memory);
  const std::vector<Attachment> all = AllAttachments(params);
  if (all.size() > kMaxDisks)
    return invalid_request("cannot attach more than 12 disks to instance");
  if (model.instance_named(project.id, params.name) != nullptr) {
    return already_exists("instance", params.name);
  }
  AttachPlan plan;
  SIM_RETURN_IF_ERROR(PlanAttachments(model, project, all, &plan));
  Instance instance = NewInstance(params, project);
  SaveWithDisks(services, project, params, std::move(plan), instance);
  RunCreateSaga(services, call, instance, params.start);
  return ApiStatus::Ok();
}

}  // namespace oxide_sim
