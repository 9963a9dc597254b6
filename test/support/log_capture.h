// The plugin's log (util/log.h) captured in a file for one test: while a LogCapture lives, every
// record goes to a file of its own; Text() and Lines() read what was written so far. At the end
// the log goes to stderr again. Make and destroy it on the test's thread while nothing else logs
// (a test fixture's member); Text() and Lines() may be called from any thread.
#pragma once

#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace oxide::testing {

class LogCapture {
 public:
  LogCapture();
  ~LogCapture();  // the log goes to stderr again

  // Everything logged so far.
  std::string Text() const;
  // The same, one line (one record) an entry.
  std::vector<std::string> Lines() const;
  // How often `part` occurs in it.
  int Count(const std::string& part) const;

 private:
  TempDir dir_;  // not copyable, so neither is a LogCapture
  int fd_ = -1;
};

}  // namespace oxide::testing
