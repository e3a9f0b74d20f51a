// A Debian library opened with dlopen at its first use instead of linked (oci/archive_lib.h,
// registry/curl_lib.h): its handle and its symbols, or one line naming the library and exit 3.
// A library the installation lacks is a broken installation, as a missing linked library would
// stop the program before it started; the line says which.
#pragma once

namespace kernodeck::util {

// dlopen(SONAME, flags | RTLD_LOCAL), or "kernodeck: cannot load NAME (SONAME): why" on stderr
// and _Exit(3) (report::kExitIncomplete; _Exit, not exit: the first use may be on a worker
// thread while others run, and no destructor may run under them).
void* openLibraryOrExit(const char* name, const char* soname, int flags);

// dlsym(handle, symbol), or the same line ("no symbol SYMBOL") and _Exit(3).
void* symbolOrExit(void* handle, const char* name, const char* soname, const char* symbol);

}  // namespace kernodeck::util
