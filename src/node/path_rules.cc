#include "node/path_rules.h"

#include <climits>

namespace oxide::node {
namespace {

// Never a target or staging path, nor anything inside them.
constexpr std::string_view kSystemTrees[] = {"/etc",   "/dev",   "/proc",   "/sys",
                                             "/usr",   "/bin",   "/sbin",   "/lib",
                                             "/lib32", "/lib64", "/libx32", "/boot"};
// Never a target or staging path themselves (paths below them are fine, e.g. /var/lib/kubelet/...).
constexpr std::string_view kSystemDirectories[] = {"/",    "/var", "/var/lib", "/var/lib/kubelet",
                                                   "/run", "/tmp", "/home",    "/root",
                                                   "/opt", "/srv", "/mnt",     "/media"};

bool InsideTree(std::string_view path, std::string_view tree) {
  return path == tree || (path.size() > tree.size() && path.substr(0, tree.size()) == tree &&
                          path[tree.size()] == '/');
}

}  // namespace

Status CheckVolumePath(std::string_view field, const std::string& path) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument(std::string(field) + " \"" + path + "\" " + why);
  };
  if (path.empty()) return InvalidArgument(std::string(field) + " is required");
  if (path.find('\0') != std::string::npos) return bad("contains a NUL byte");
  if (path.size() >= PATH_MAX) return bad("is longer than PATH_MAX");
  if (path[0] != '/') return bad("is not an absolute path");
  if (path.size() > 1) {
    size_t start = 1;
    while (start <= path.size()) {
      size_t end = path.find('/', start);
      if (end == std::string::npos) end = path.size();
      std::string_view part(path.data() + start, end - start);
      if (part.empty()) return bad("is not normalized (empty component or trailing '/')");
      if (part == "." || part == "..") return bad("is not normalized (contains . or ..)");
      start = end + 1;
    }
  }
  for (std::string_view tree : kSystemTrees) {
    if (InsideTree(path, tree)) {
      return bad("is inside the system location " + std::string(tree) + "; refusing to use it");
    }
  }
  for (std::string_view dir : kSystemDirectories) {
    if (path == dir) return bad("is a system location; refusing to use it");
  }
  return Status::Ok();
}

}  // namespace oxide::node
