// See curl_lib.h. The table is filled from libcurl's soname (the system's, as the dynamic loader
// would have found it for a linked library); this file alone sees the real functions.
#define KDK_CURL_LIB_IMPL
#include "kernodeck/registry/curl_lib.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "kernodeck/util/dl_library.h"

namespace kernodeck::registry::curl_lib {

namespace {

// Debian's libcurl4 (the soname of the libcurl4-*-dev this is built against).
constexpr const char* kSoname = "libcurl.so.4";

// Resolves one member from the symbol of the same name.
#define KDK_CURL_RESOLVE(name) \
  a.name = reinterpret_cast<decltype(a.name)>(util::symbolOrExit(handle, "libcurl", kSoname, #name));

Api load() {
  Api a;
  // Lazy, as the loader binds a linked library: the closure's calls are bound when first made,
  // not all 28 libraries' at once (a warm registry audit calls few of them).
  void* handle = util::openLibraryOrExit("libcurl", kSoname, RTLD_LAZY);
  KDK_CURL_FUNCTIONS(KDK_CURL_RESOLVE)
  // Once, before any handle, in the static's thread-safe initialisation (curl_global_init is not
  // thread-safe).
  if (a.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    std::fprintf(stderr, "kernodeck: cannot load libcurl (%s): curl_global_init failed\n", kSoname);
    std::fflush(stderr);
    std::_Exit(3);
  }
  return a;
}

}  // namespace

const Api& api() {
  // A static initialised once, thread-safe, as oci/archive_lib's: each use costs one load of its
  // guard.
  static const Api a = load();
  return a;
}

}  // namespace kernodeck::registry::curl_lib
