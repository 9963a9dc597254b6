#include "backing_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace oxide_sim {
namespace {

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

bool copy_range(int in, int out, off_t start, off_t end, std::string* error) {
  off_t in_offset = start;
  off_t out_offset = start;
  while (in_offset < end) {
    const ssize_t copied = ::copy_file_range(in, &in_offset, out, &out_offset,
                                             static_cast<size_t>(end - in_offset), 0);
    if (copied < 0) {
      *error = errno_text("copy_file_range");
      return false;
    }
    if (copied == 0) break;
  }
  return true;
}

}  // namespace

bool create_sparse_file(const std::string& path, uint64_t size, std::string* error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = errno_text("cannot create " + path);
    return false;
  }
  const bool ok = ::ftruncate(fd, static_cast<off_t>(size)) == 0;
  if (!ok) *error = errno_text("cannot size " + path);
  ::close(fd);
  return ok;
}

bool copy_sparse_file(const std::string& from, const std::string& to, uint64_t size,
                      std::string* error) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    *error = errno_text("cannot open " + from);
    return false;
  }
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) {
    *error = errno_text("cannot create " + to);
    ::close(in);
    return false;
  }
  const off_t length = ::lseek(in, 0, SEEK_END);
  bool ok = ::ftruncate(out, static_cast<off_t>(size)) == 0;
  off_t position = 0;
  while (ok && position < length) {
    const off_t data = ::lseek(in, position, SEEK_DATA);
    if (data < 0) break;  // ENXIO: only a hole remains
    off_t hole = ::lseek(in, data, SEEK_HOLE);
    if (hole < 0) hole = length;
    ok = copy_range(in, out, data, hole, error);
    position = hole;
  }
  if (ok && ::fsync(out) != 0) {
    *error = errno_text("fsync " + to);
    ok = false;
  }
  ::close(in);
  ::close(out);
  return ok;
}

void remove_file(const std::string& path) {
  ::unlink(path.c_str());
}

}  // namespace oxide_sim
