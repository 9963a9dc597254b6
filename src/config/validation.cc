#include "config/validation.h"

#include <sys/un.h>

#include <cctype>
#include <filesystem>

namespace oxide {

bool IsUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(text[i]))) {
      return false;
    }
  }
  return true;
}

std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string OxideNameProblem(std::string_view name) {
  if (name.empty()) return "name requires at least one character";
  if (name.size() > 63) return "name may contain at most 63 characters";
  if (name[0] < 'a' || name[0] > 'z') return "name must begin with an ASCII lowercase character";
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok) {
      return std::string("name contains invalid character: \"") + c +
             "\" (allowed characters are lowercase ASCII, digits, and \"-\")";
    }
  }
  if (name.back() == '-') return "name cannot end with \"-\"";
  if (IsUuid(name)) return "name cannot be a UUID to avoid ambiguity with IDs";
  return "";
}

std::string NodeIdForInstanceName(std::string_view instance_name) {
  return std::string(kInstanceNameNodeIdPrefix) + std::string(instance_name);
}

std::optional<std::string> InstanceNameOfNodeId(std::string_view node_id) {
  if (node_id.substr(0, kInstanceNameNodeIdPrefix.size()) != kInstanceNameNodeIdPrefix) {
    return std::nullopt;
  }
  std::string_view name = node_id.substr(kInstanceNameNodeIdPrefix.size());
  if (!OxideNameProblem(name).empty()) return std::nullopt;
  return std::string(name);
}

bool IsKubernetesNodeName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    std::string_view label =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

bool IsValidDriverName(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '.') return false;
  }
  return true;
}

StatusOr<std::string> SocketPathFromEndpoint(std::string_view endpoint) {
  std::string_view path = endpoint;
  constexpr std::string_view kScheme = "unix://";
  if (endpoint.substr(0, kScheme.size()) == kScheme) {
    path = endpoint.substr(kScheme.size());
  } else if (endpoint.find("://") != std::string_view::npos) {
    return InvalidArgument("only unix sockets are supported: use unix:///absolute/path.sock");
  }
  if (path.empty() || path[0] != '/') {
    return InvalidArgument("the socket path must be absolute, e.g. unix:///csi/csi.sock");
  }
  if (path.back() == '/') return InvalidArgument("the socket path names a directory");
  std::filesystem::path normal = std::filesystem::path(path).lexically_normal();
  if (normal.string() != path) {
    return InvalidArgument("the socket path must be normalized (no '.', '..' or '//')");
  }
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return InvalidArgument("the socket path is longer than the " +
                           std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                           " bytes a unix socket allows");
  }
  return std::string(path);
}

std::string ParentDirectory(std::string_view path) {
  std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  return p.parent_path().string();
}

}  // namespace oxide
