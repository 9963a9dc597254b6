// The handlers of the control API's endpoints; control_api.cc's routing table names them
// (README.md, "Control API"). Each answers one method on one path; what it gets and may throw:
// control_call.h. Event-loop thread only.
#pragma once

#include "control_call.h"

namespace oxide_sim {

// control_objects.cc: objects made or changed directly, with no saga.
HttpResponse post_project(const ControlCall& call);
HttpResponse post_instance(const ControlCall& call);
HttpResponse put_instance(const ControlCall& call);
HttpResponse post_device_order(const ControlCall& call);
HttpResponse put_disk_state(const ControlCall& call);
HttpResponse post_freeze(const ControlCall& call);
HttpResponse post_release(const ControlCall& call);
HttpResponse post_fault(const ControlCall& call);

// control_settings.cc: the simulator itself: state dump, clock, tokens, reset, timing and
// quotas, fault injection, request log.
HttpResponse get_state(const ControlCall& call);
HttpResponse clock_endpoint(const ControlCall& call);
HttpResponse tokens_endpoint(const ControlCall& call);
HttpResponse post_reset(const ControlCall& call);
HttpResponse get_config(const ControlCall& call);
HttpResponse put_config(const ControlCall& call);
HttpResponse get_faults(const ControlCall& call);
HttpResponse put_faults(const ControlCall& call);
HttpResponse delete_faults(const ControlCall& call);
HttpResponse get_requests(const ControlCall& call);
HttpResponse delete_requests(const ControlCall& call);

}  // namespace oxide_sim
