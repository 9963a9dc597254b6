// The standard process_* families (resident memory, CPU seconds, open fds, start time) read from
// /proc/self at render time. Any thread (the metrics server's, during a scrape).
#pragma once

#include <string>

namespace oxide::metrics {

void AppendProcessMetrics(std::string* out);

}  // namespace oxide::metrics
