#include "node/kernel_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <deque>
#include <functional>

#include "node/mounter.h"

namespace oxide::node {
namespace {

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

std::string Lowercase(std::string text) {
  for (char& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

int OpenKmsg() {
  return open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

// Calls `visit` with the text of each record from the position of `fd` on, until none is left.
// Records overwritten in the ring before they were read (EPIPE) are skipped.
void ReadRecords(int fd, const std::function<void(const std::string&)>& visit) {
  char buffer[8192];  // a record is at most about 1 KiB of text plus its dictionary
  for (int records = 0; records < 1000000; ++records) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      visit(KernelRecordText(std::string(buffer, static_cast<size_t>(n))));
    } else if (n == 0 || (errno != EINTR && errno != EPIPE)) {
      return;  // EAGAIN: the end of the log
    }
  }
}

std::vector<std::string> LastMatching(int fd, size_t max_lines,
                                      const std::function<bool(const std::string&)>& wanted) {
  std::deque<std::string> kept;
  ReadRecords(fd, [&](const std::string& text) {
    if (max_lines == 0 || !wanted(text)) return;
    kept.push_back(text);
    if (kept.size() > max_lines) kept.pop_front();
  });
  return {kept.begin(), kept.end()};
}

}  // namespace

std::string KernelRecordText(const std::string& record) {
  size_t start = record.find(';');
  start = start == std::string::npos ? 0 : start + 1;
  size_t end = record.find('\n', start);
  return record.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

bool NamesDevice(const std::string& text, const std::string& device_name) {
  if (device_name.empty()) return false;
  for (size_t at = text.find(device_name); at != std::string::npos;
       at = text.find(device_name, at + 1)) {
    const size_t after = at + device_name.size();
    if ((at == 0 || !IsWordChar(text[at - 1])) &&
        (after == text.size() || !IsWordChar(text[after])))
      return true;
  }
  return false;
}

bool IsDevicelessMessageOf(const std::string& text, const std::string& fs_type) {
  const size_t colon = text.find(':');
  if (fs_type.empty() || colon == std::string::npos) return false;
  const std::string origin = Lowercase(text.substr(0, colon));  // "ext4", "xfs", "EXT4-fs"
  return origin.find('(') == std::string::npos && origin.rfind(Lowercase(fs_type), 0) == 0;
}

KernelLogCursor::KernelLogCursor() : fd_(OpenKmsg()) {
  if (fd_ >= 0 && lseek(fd_, 0, SEEK_END) < 0) {
    close(fd_);
    fd_ = -1;
  }
}

KernelLogCursor::~KernelLogCursor() {
  if (fd_ >= 0) close(fd_);
}

std::vector<std::string> KernelLogCursor::MessagesAbout(const std::string& device_name,
                                                        const std::string& fs_type,
                                                        size_t max_lines) {
  if (fd_ < 0) return {};
  return LastMatching(fd_, max_lines, [&](const std::string& text) {
    return NamesDevice(text, device_name) || IsDevicelessMessageOf(text, fs_type);
  });
}

std::vector<std::string> KernelMessagesAbout(const std::string& device_name, size_t max_lines) {
  const int fd = OpenKmsg();
  if (fd < 0) return {};
  std::vector<std::string> found = LastMatching(
      fd, max_lines, [&](const std::string& text) { return NamesDevice(text, device_name); });
  close(fd);
  return found;
}

}  // namespace oxide::node
