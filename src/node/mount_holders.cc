// HoldersOf (mounter.h): which processes keep a mount busy, from the links in /proc/<pid>.
#include <dirent.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>

#include "node/mounter.h"

namespace oxide::node {
namespace {

// A bound on the links read in one scan (a node runs thousands of processes with many files).
constexpr int kMaxLinks = 100000;

std::string ReadLink(const std::string& path) {
  char target[4096];
  ssize_t n = readlink(path.c_str(), target, sizeof target);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof target) return "";
  std::string link(target, static_cast<size_t>(n));
  const std::string deleted = " (deleted)";
  if (link.size() > deleted.size() &&
      link.compare(link.size() - deleted.size(), deleted.size(), deleted) == 0) {
    link.resize(link.size() - deleted.size());
  }
  return link;
}

bool IsAtOrBelow(const std::string& path, const std::string& mount_point) {
  if (path.empty() || path[0] != '/') return false;  // "socket:[123]", "anon_inode:..."
  if (path.compare(0, mount_point.size(), mount_point) != 0) return false;
  return path.size() == mount_point.size() || mount_point == "/" || path[mount_point.size()] == '/';
}

// Whether process `pid` holds `mount_point`; counts the links read in `*budget`.
bool Holds(const std::string& pid, const std::string& mount_point, int* budget) {
  const std::string dir = "/proc/" + pid;
  for (const char* link : {"/cwd", "/root", "/exe"}) {
    --*budget;
    if (IsAtOrBelow(ReadLink(dir + link), mount_point)) return true;
  }
  DIR* fds = opendir((dir + "/fd").c_str());
  if (fds == nullptr) return false;
  bool holds = false;
  while (!holds && *budget > 0) {
    const dirent* entry = readdir(fds);
    if (entry == nullptr) break;
    if (entry->d_name[0] == '.') continue;
    --*budget;
    holds = IsAtOrBelow(ReadLink(dir + "/fd/" + entry->d_name), mount_point);
  }
  closedir(fds);
  return holds;
}

std::string Command(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

}  // namespace

std::vector<std::string> HoldersOf(const std::string& mount_point, size_t max) {
  std::string root = mount_point;
  while (root.size() > 1 && root.back() == '/')
    root.pop_back();
  std::vector<std::string> holders;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return holders;
  int budget = kMaxLinks;
  while (holders.size() < max && budget > 0) {
    const dirent* entry = readdir(proc);
    if (entry == nullptr) break;
    const std::string pid = entry->d_name;
    if (pid.empty() || !std::isdigit(static_cast<unsigned char>(pid[0]))) continue;
    if (Holds(pid, root, &budget)) holders.push_back("pid " + pid + " (" + Command(pid) + ")");
  }
  closedir(proc);
  return holders;
}

}  // namespace oxide::node
