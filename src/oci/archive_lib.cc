// See archive_lib.h. The table is filled from libarchive's soname (the system's, as the dynamic
// loader would have found it for a linked library); this file alone sees the real functions.
#define KDK_ARCHIVE_LIB_IMPL
#include "kernodeck/oci/archive_lib.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kernodeck::oci::archive_lib {

namespace {

// Debian's libarchive13 (the soname of the libarchive-dev this is built against).
constexpr const char* kSoname = "libarchive.so.13";

[[noreturn]] void unavailable(const std::string& why) {
  std::fprintf(stderr, "kernodeck: cannot load libarchive (%s): %s\n", kSoname, why.c_str());
  std::fflush(stderr);
  // report::kExitIncomplete: the installation is broken, nothing can be read. _Exit, not exit:
  // the first use may be on a layer thread while others run, and no destructor may run under them.
  std::_Exit(3);
}

}  // namespace

// Resolves one member from the symbol of the same name.
#define KDK_ARCHIVE_RESOLVE(name)                                      \
  a.name = reinterpret_cast<decltype(a.name)>(::dlsym(handle, #name)); \
  if (!a.name) unavailable(std::string("no symbol ") + #name);

namespace {

Api load() {
  Api a;
  void* handle = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    unavailable(e ? e : "dlopen failed");
  }
  KDK_ARCHIVE_FUNCTIONS(KDK_ARCHIVE_RESOLVE)
  return a;
}

}  // namespace

const Api& api() {
  // A static initialised once, thread-safe: after the first call each use costs one load of its
  // guard, not std::call_once's (every archive_* call of the tar walk comes here; issue 31).
  static const Api a = load();
  return a;
}

}  // namespace kernodeck::oci::archive_lib
