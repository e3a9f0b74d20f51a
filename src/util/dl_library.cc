// See dl_library.h.
#include "kernodeck/util/dl_library.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kernodeck::util {

namespace {

[[noreturn]] void unavailable(const char* name, const char* soname, const std::string& why) {
  std::fprintf(stderr, "kernodeck: cannot load %s (%s): %s\n", name, soname, why.c_str());
  std::fflush(stderr);
  std::_Exit(3);
}

}  // namespace

void* openLibraryOrExit(const char* name, const char* soname, int flags) {
  void* handle = ::dlopen(soname, flags | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    unavailable(name, soname, e ? e : "dlopen failed");
  }
  return handle;
}

void* symbolOrExit(void* handle, const char* name, const char* soname, const char* symbol) {
  void* f = ::dlsym(handle, symbol);
  if (!f) unavailable(name, soname, std::string("no symbol ") + symbol);
  return f;
}

}  // namespace kernodeck::util
