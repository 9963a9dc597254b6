// The syntax of an instance metadata file (--instance-metadata-file, e.g. written by an init
// container): KEY=VALUE lines naming the Oxide instance this node runs on, the file source of the
// node's identity. Pure: the file is read at node start by node/instance_identity.h. Any thread.
#pragma once

#include <string>

#include "util/status.h"

namespace oxide::node {

// The instance id in the text of an instance metadata file: KEY=VALUE lines, the first
// OXIDE_INSTANCE_ID (or instance_id) line wins and must be a UUID; `file` names it in errors.
StatusOr<std::string> ParseInstanceMetadata(const std::string& text, const std::string& file);

}  // namespace oxide::node
