// See archive_lib.h. The table is filled from libarchive's soname (the system's, as the dynamic
// loader would have found it for a linked library); this file alone sees the real functions.
#define KDK_ARCHIVE_LIB_IMPL
#include "kernodeck/oci/archive_lib.h"

#include <dlfcn.h>

#include "kernodeck/util/dl_library.h"

namespace kernodeck::oci::archive_lib {

namespace {

// Debian's libarchive13 (the soname of the libarchive-dev this is built against).
constexpr const char* kSoname = "libarchive.so.13";

// Resolves one member from the symbol of the same name.
#define KDK_ARCHIVE_RESOLVE(name) \
  a.name = reinterpret_cast<decltype(a.name)>(util::symbolOrExit(handle, "libarchive", kSoname, #name));

Api load() {
  Api a;
  void* handle = util::openLibraryOrExit("libarchive", kSoname, RTLD_NOW);
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
