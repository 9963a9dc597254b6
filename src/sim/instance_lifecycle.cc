#include "instance_lifecycle.h"

#include "clock.h"
#include "guest_devices.h"

namespace oxide_sim {

void set_run_state(Services& services, Instance& instance, const std::string& run_state) {
  instance.run_state = run_state;
  instance.time_run_state_updated = now_rfc3339();
  services.model.put(instance);
  services.guest.reconcile(services.model);
}

void schedule_run_state(Services& services, const std::string& instance_id, const std::string& from,
                        const std::string& to) {
  const Instance* instance = services.model.instance(instance_id);
  if (instance == nullptr) return;
  services.timeline.Run(services.model.timing.instance_delay_ms,
                        {"instance", instance_id, instance->name},
                        [&services, instance_id, from, to]() {
                          Instance* current = services.model.instance(instance_id);
                          if (current == nullptr || current->run_state != from) return;
                          set_run_state(services, *current, to);
                        });
}

void detach_all_disks(Services& services, const std::string& instance_id) {
  Model& model = services.model;
  for (auto& [id, disk] : model.disks) {
    if (disk_state_has_instance(disk.state) && disk.instance_id == instance_id) {
      disk.state = "detached";
      disk.instance_id.clear();
      disk.time_modified = now_rfc3339();
      model.put(disk);
    }
  }
  services.guest.reconcile(model);
}

void check_instance_size(uint64_t ncpus, uint64_t memory) {
  if (ncpus > 254) throw invalid_request("cannot have more than 254 vCPUs per instance");
  if (ncpus == 0) throw invalid_request("cannot have fewer than 1 vCPUs per instance");
  if (memory < kGiB) throw invalid_value("size", "memory must be at least 1 GiB");
  if (memory % kGiB != 0) throw invalid_value("size", "memory must be divisible by 1 GiB");
  if (memory > 1536 * kGiB) {
    throw invalid_value("size", "memory must be less than or equal to 1536 GiB");
  }
}

}  // namespace oxide_sim
