#include "util/shared_library.h"

namespace oxide {

void* OpenSharedLibrary(const char* file, const char* debian_package, const char* needed_by,
                        std::string* error) {
  void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = std::string("cannot load ") + file + " (Debian package " + debian_package +
             "), which " + needed_by + " needs: " + (why != nullptr ? why : "unknown error");
  }
  return handle;
}

}  // namespace oxide
