#include "rpc/socket_file.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/log.h"

namespace oxide::rpc {
namespace {

// True when a process accepts connections on the socket at `path`.
bool SomeoneListens(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  bool connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return connected;
}

}  // namespace

Status PrepareSocketPath(const std::string& path) {
  std::string dir = path.substr(0, path.rfind('/'));
  struct stat info {};
  if (!dir.empty() && (stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))) {
    return FailedPrecondition("the socket directory " + dir + " does not exist");
  }
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return FailedPrecondition("cannot inspect " + path + ": " + std::strerror(errno));
  }
  if (!S_ISSOCK(info.st_mode)) {
    return FailedPrecondition(path + " exists and is not a socket; refusing to replace it");
  }
  if (SomeoneListens(path)) {
    return FailedPrecondition("another process is serving " + path +
                              "; stop it first or choose another --endpoint");
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return FailedPrecondition("cannot remove the stale socket " + path + ": " +
                              std::strerror(errno));
  }
  log::Info("replaced a stale socket", {{"path", path}});
  return Status::Ok();
}

void RemoveSocketFile(const std::string& path) {
  struct stat info {};
  if (lstat(path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode)) unlink(path.c_str());
}

}  // namespace oxide::rpc
