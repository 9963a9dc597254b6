// Checks of the paths a CO passes to the node RPCs: absolute, normalized, and not a system
// location. Pure functions: any thread.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace oxide::node {

// OK when `path` is absolute, normalized (no "", "." or ".." components, no trailing '/'), at
// most PATH_MAX bytes, free of NUL bytes, and neither a system location (/, /etc, /var, ...)
// nor inside one of the system trees (/etc, /dev, /proc, /sys, /usr, /boot, /bin, /lib, ...).
// Otherwise INVALID_ARGUMENT naming `field` and the reason.
Status CheckVolumePath(std::string_view field, const std::string& path);

}  // namespace oxide::node
