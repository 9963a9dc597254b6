// Instance run-state changes shared by the API and the control API: set a state (and keep
// guest devices in step), and the timed steps starting->running, stopping->stopped.
// Event-loop thread only.
#pragma once

#include <string>

#include "api_context.h"

namespace oxide_sim {

// Sets run_state (+ time_run_state_updated), persists, and reconciles guest devices.
void set_run_state(Services& services, Instance& instance, const std::string& run_state);

// After the instance delay (or when released, if frozen), moves the instance from `from`
// to `to` if it is still in `from`.
void schedule_run_state(Services& services, const std::string& instance_id, const std::string& from,
                        const std::string& to);

// Detaches every disk attached to the instance (instance delete).
void detach_all_disks(Services& services, const std::string& instance_id);

// Memory/CPU checks shared by create and update. Throws ApiError.
void check_instance_size(uint64_t ncpus, uint64_t memory);

}  // namespace oxide_sim
