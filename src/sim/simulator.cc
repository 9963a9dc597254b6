// Simulator start-up (state, recovery, seeds), shutdown and reset.
#include "simulator.h"

#include <fstream>
#include <sstream>

#include "clock.h"
#include "instance_lifecycle.h"
#include "json_reader.h"

namespace oxide_sim {
namespace {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

Simulator::Simulator(uv_loop_t* loop, SimOptions options)
    : loop_(loop),
      options_(std::move(options)),
      model_(store_),
      timeline_(
          loop,
          [this](const ResourceKey& key) { return model_.is_frozen(key.kind, key.id, key.name); }),
      services_{model_, timeline_, guest_, auth_},
      control_{services_, faults_, log_, auth_, [this]() { reset(); }},
      server_(loop) {}

bool Simulator::start(std::string* error) {
  auth_.tokens = {options_.token};
  ObjectReader::SetRejectUnknownFields(options_.reject_unknown_fields);
  faults_.configure(options_.fault_seed, options_.fault_rules);
  TimingSettings& timing = model_.timing;
  timing.create_delay_ms = options_.create_delay_ms;
  timing.delete_delay_ms = options_.delete_delay_ms;
  timing.instance_delay_ms = options_.instance_delay_ms;
  timing.async_mode = options_.async_mode;
  timing.hotplug = options_.hotplug;
  if (options_.manual_clock) timeline_.UseManualClock();
  if (!options_.state_db.empty() && !store_.open(options_.state_db, error)) return false;
  if (!model_.load(error)) return false;
  if (!guest_.start({options_.guest_backing_dir, options_.guest_sysfs_root}, error)) return false;
  if (!apply_seeds(error)) return false;
  guest_.repair_files(model_);
  recover_transitions();
  guest_.reconcile(model_);

  HttpServer::Options server_options;
  server_options.port = options_.port;
  server_options.idle_timeout_s = options_.idle_timeout_s;
  if (!options_.tls_cert_file.empty()) {
    server_options.tls_cert_pem = read_file(options_.tls_cert_file);
    server_options.tls_key_pem = read_file(options_.tls_key_file);
    if (!server_options.tls_cert_pem || !server_options.tls_key_pem) {
      *error = "cannot read --tls-cert or --tls-key";
      return false;
    }
  }
  return server_.start(
      server_options,
      [this](HttpRequest&& request, Responder responder) {
        Handle(std::move(request), std::move(responder));
      },
      error);
}

void Simulator::stop() {
  server_.stop();
  timeline_.Shutdown();
  guest_.shutdown();
}

bool Simulator::apply_seeds(std::string* error) {
  WriteBatch batch(store_);
  std::vector<std::string> projects = options_.projects;
  if (projects.empty() && options_.seed_file.empty()) projects.push_back("demo");
  for (const std::string& name : projects) {
    if (oxide::Status valid = ValidateName(name); !valid.ok()) {
      *error = "--project " + name + ": " + valid.message();
      return false;
    }
    ensure_project(model_, name, "");
  }
  if (!options_.seed_file.empty()) {
    auto text = read_file(options_.seed_file);
    if (!text) {
      *error = "cannot read --seed-file " + options_.seed_file;
      return false;
    }
    try {
      const nlohmann::json seed = nlohmann::json::parse(*text);
      for (const auto& project : seed.value("projects", nlohmann::json::array())) {
        const std::string name = project.at("name");
        if (oxide::Status valid = ValidateName(name); !valid.ok()) {
          throw std::invalid_argument(valid.message());
        }
        ensure_project(model_, name, project.value("description", ""));
      }
      for (const auto& spec : seed.value("instances", nlohmann::json::array())) {
        Project* project = model_.project_by(NameOrId{false, spec.at("project")});
        if (project != nullptr && model_.instance_named(project->id, spec.at("name")) != nullptr) {
          continue;
        }
        create_sim_instance(services_, spec);
      }
      if (seed.contains("quota")) {
        const auto& quota = seed.at("quota");
        model_.quota.cpus = quota.value("cpus", model_.quota.cpus);
        model_.quota.memory = quota.value("memory", model_.quota.memory);
        model_.quota.storage = quota.value("storage", model_.quota.storage);
      }
    } catch (const std::exception& problem) {
      *error = "bad --seed-file " + options_.seed_file + ": " + problem.what();
      return false;
    }
  }
  if (options_.storage_quota) model_.quota.storage = *options_.storage_quota;
  model_.save_quota();
  return true;
}

// Nexus resumes interrupted sagas after a restart, so transitions cut off by a kill finish
// forward: creating disks become detached, creating snapshots are copied and become ready
// (their disk leaves maintenance), instances finish creating/starting/stopping. Frozen
// resources stay where they are until released.
void Simulator::recover_transitions() {
  std::vector<std::string> disk_ids, snapshot_ids, instance_ids;
  for (const auto& [id, disk] : model_.disks) {
    if (disk.state == "creating") disk_ids.push_back(id);
  }
  for (const auto& [id, snapshot] : model_.snapshots) {
    if (snapshot.state == "creating") snapshot_ids.push_back(id);
  }
  for (const auto& [id, instance] : model_.instances) {
    const std::string& state = instance.run_state;
    if (state == "creating" || state == "starting" || state == "stopping")
      instance_ids.push_back(id);
  }
  for (const std::string& id : disk_ids) {
    timeline_.Run(0, {"disk", id, model_.disks.at(id).name}, [this, id]() {
      Disk* disk = model_.disk(id);
      if (disk == nullptr || disk->state != "creating") return;
      disk->state = "detached";
      disk->time_modified = now_rfc3339();
      model_.put(*disk);
    });
  }
  for (const std::string& id : snapshot_ids) {
    timeline_.Run(0, {"snapshot", id, model_.snapshots.at(id).name}, [this, id]() {
      Snapshot* snapshot = model_.snapshot(id);
      if (snapshot == nullptr || snapshot->state != "creating") return;
      WriteBatch batch(store_);
      Disk* disk = model_.disk(snapshot->disk_id);
      if (disk != nullptr) guest_.snapshot_taken(*snapshot, *disk);
      snapshot->state = disk != nullptr ? "ready" : "faulted";
      snapshot->time_modified = now_rfc3339();
      model_.put(*snapshot);
      if (disk != nullptr && disk->state == "maintenance") {
        disk->state = "detached";
        model_.put(*disk);
      }
    });
  }
  for (const std::string& id : instance_ids) {
    const Instance& instance = model_.instances.at(id);
    const std::string next = instance.run_state == "starting" ? "running" : "stopped";
    timeline_.Run(0, {"instance", id, instance.name},
                  [this, id, from = instance.run_state, next]() {
                    Instance* current = model_.instance(id);
                    if (current != nullptr && current->run_state == from)
                      set_run_state(services_, *current, next);
                  });
  }
  // A disk left in maintenance without a running snapshot (killed between writes).
  for (auto& [id, disk] : model_.disks) {
    bool snapshot_running = false;
    for (const auto& [sid, snapshot] : model_.snapshots) {
      snapshot_running |= snapshot.disk_id == id && snapshot.state == "creating";
    }
    if (disk.state == "maintenance" && !snapshot_running) {
      disk.state = "detached";
      model_.put(disk);
    }
  }
}

void Simulator::reset() {
  WriteBatch batch(store_);
  for (const auto& [id, disk] : model_.disks)
    store_.erase("disk", id);
  for (const auto& [id, snapshot] : model_.snapshots)
    store_.erase("snapshot", id);
  for (const auto& [id, instance] : model_.instances)
    store_.erase("instance", id);
  for (const auto& [id, project] : model_.projects)
    store_.erase("project", id);
  for (const auto& [id, disk] : model_.disks)
    guest_.disk_deleted(id);
  for (const auto& [id, snapshot] : model_.snapshots)
    guest_.snapshot_deleted(id);
  model_.disks.clear();
  model_.snapshots.clear();
  model_.instances.clear();
  model_.projects.clear();
  model_.frozen.clear();
  model_.save_frozen();
  // Requests still waiting on a transition get their answer (500: the object is gone).
  timeline_.RunAllNow();
  model_.quota = Quota{};
  model_.physical_disk_bytes = 0;
  model_.timing = TimingSettings{options_.create_delay_ms, options_.delete_delay_ms,
                                 options_.instance_delay_ms, options_.async_mode, options_.hotplug};
  faults_.configure(options_.fault_seed, options_.fault_rules);
  log_.clear();
  auth_.tokens = {options_.token};
  std::string ignored;
  apply_seeds(&ignored);
  guest_.reconcile(model_);
}

}  // namespace oxide_sim
