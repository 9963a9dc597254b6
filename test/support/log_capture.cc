#include "support/log_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "util/log.h"

namespace oxide::testing {

LogCapture::LogCapture() {
  fd_ = open(dir_.File("log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd_ < 0) {
    std::perror("LogCapture: cannot open its log file");
    std::abort();
  }
  log::SetOutputFd(fd_);
}

LogCapture::~LogCapture() {
  log::SetOutputFd(STDERR_FILENO);
  close(fd_);
}

std::string LogCapture::Text() const {
  return ReadFile(dir_.File("log"));
}

int LogCapture::Count(const std::string& part) const {
  const std::string text = Text();
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

std::vector<std::string> LogCapture::Lines() const {
  std::istringstream in(Text());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

}  // namespace oxide::testing
