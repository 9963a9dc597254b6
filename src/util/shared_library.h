// Opening a shared library with dlopen() and resolving its functions by name, for libraries only
// some runs need (libcurl for the controller, libmicrohttpd for --metrics-address), so that a run
// without them does not map them and the chain of libraries they link. Any thread; the callers
// open each library once (std::call_once) and keep the handle for the life of the process.
#pragma once

#include <dlfcn.h>

#include <string>
#include <type_traits>

namespace oxide {

// dlopen(file, RTLD_NOW | RTLD_LOCAL), or nullptr with `error` naming the Debian package to
// install and what needs it.
void* OpenSharedLibrary(const char* file, const char* debian_package, const char* needed_by,
                        std::string* error);

// Fills function pointers from an open library; remembers the first name it could not find.
class SymbolResolver {
 public:
  explicit SymbolResolver(void* handle) : handle_(handle) {}

  template <typename Function>
  void Find(Function** slot, const char* name) {
    static_assert(std::is_function_v<Function>);
    void* symbol = dlsym(handle_, name);
    if (symbol == nullptr && missing_.empty()) missing_ = name;
    *slot = reinterpret_cast<Function*>(symbol);
  }
  // The first function that was not found, or "".
  const std::string& missing() const { return missing_; }

 private:
  void* handle_;
  std::string missing_;
};

}  // namespace oxide
