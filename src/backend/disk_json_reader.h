// Reads one Oxide Disk out of a JSON body in a single streaming pass (nlohmann's SAX interface),
// without building a document: every disk answer (create, view, attach, detach, polls) goes
// through here. Same rules and messages as the generic reader of oxide_json.cc: unknown fields
// ignored; the first missing or mistyped required field, in declaration order, is the problem.
// Kept for its measured worth (docs/performance.md, issue 36): 9–12 % more RPCs/s at 16 callers
// against an instant Oxide than the document reader.
// Pure: any thread.
#pragma once

#include <string>
#include <string_view>

#include "backend/oxide_types.h"

namespace oxide::backend {

// Fills `disk` and returns "", or returns the problem, e.g. `field "size" is missing`,
// `the body is not JSON`.
std::string ReadDiskJson(std::string_view body, Disk* disk);

}  // namespace oxide::backend
