// Syntax checks shared by the settings parser and the RPC handlers: Oxide names, UUIDs, CSI
// driver names, endpoints. Pure functions; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace oxide {

// The plugin's one UUID rule: the hyphenated 8-4-4-4-12 form, hex digits in either case (ids
// are lowercased at the CSI boundary). Oxide itself also parses the 32-digit simple form as an
// id in a NameOrId; the plugin never sends one: a CSI id in that form is refused (NOT_FOUND:
// not an Oxide id) and the names the plugin makes start with "csi-".
bool IsUuid(std::string_view text);
std::string ToLower(std::string_view text);

// Oxide resource name rules (1-63 bytes, [a-z][a-z0-9-]*, no trailing '-', not a UUID).
// Returns the reason it is not a valid name, or an empty string.
std::string OxideNameProblem(std::string_view name);

// CSI node ids: an Oxide instance id (UUID), or "name:<instance-name>" for a node whose Kubernetes
// Node has no providerID: the controller then looks the instance up by name in its project. Both
// forms stay well under CSI's 192-byte limit (36 and at most 68 bytes).
inline constexpr std::string_view kInstanceNameNodeIdPrefix = "name:";
std::string NodeIdForInstanceName(std::string_view instance_name);
// The instance name in a name-form node id; nullopt when `node_id` is not one or the name breaks
// Oxide's name rules.
std::optional<std::string> InstanceNameOfNodeId(std::string_view node_id);

// Kubernetes node names (RFC 1123 subdomain: 1-253 bytes of [a-z0-9-.], alphanumeric at both
// ends of each dot-separated label).
bool IsKubernetesNodeName(std::string_view name);

// CSI plugin name rules: at most 63 characters, starts and ends alphanumeric, '-', '.' inside.
bool IsValidDriverName(std::string_view name);

// Accepts "unix:///abs/path.sock" or "/abs/path.sock" and returns the socket path.
StatusOr<std::string> SocketPathFromEndpoint(std::string_view endpoint);

// The directory part of an absolute path ("/a/b.sock" -> "/a"), lexically normalised.
std::string ParentDirectory(std::string_view path);

}  // namespace oxide
