// See curl_lib.h. The table is filled from libcurl's soname (the system's, as the dynamic loader
// would have found it for a linked library); this file alone sees the real functions.
#define KDK_CURL_LIB_IMPL
#include "kernodeck/registry/curl_lib.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace kernodeck::registry::curl_lib {

namespace {

// Debian's libcurl4 (the soname of the libcurl4-*-dev this is built against).
constexpr const char* kSoname = "libcurl.so.4";

[[noreturn]] void unavailable(const std::string& why) {
  std::fprintf(stderr, "kernodeck: cannot load libcurl (%s): %s\n", kSoname, why.c_str());
  std::fflush(stderr);
  // report::kExitIncomplete. _Exit, not exit: the first use may be on a worker thread while
  // others run, and no destructor may run under them.
  std::_Exit(3);
}

}  // namespace

// Resolves one member from the symbol of the same name.
#define KDK_CURL_RESOLVE(name)                                         \
  a.name = reinterpret_cast<decltype(a.name)>(::dlsym(handle, #name)); \
  if (!a.name) unavailable(std::string("no symbol ") + #name);

const Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    // Lazy, as the loader binds a linked library: the closure's calls are bound when first made,
    // not all 28 libraries' at once (a warm registry audit calls few of them).
    void* handle = ::dlopen(kSoname, RTLD_LAZY | RTLD_LOCAL);
    if (!handle) {
      const char* e = ::dlerror();
      unavailable(e ? e : "dlopen failed");
    }
    KDK_CURL_FUNCTIONS(KDK_CURL_RESOLVE)
    // Once, before any handle, under call_once (curl_global_init is not thread-safe).
    if (a.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) unavailable("curl_global_init failed");
  });
  return a;
}

}  // namespace kernodeck::registry::curl_lib
