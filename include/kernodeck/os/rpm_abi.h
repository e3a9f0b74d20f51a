// The interface between Kernodeck and its rpm plugin, libkernodeck_rpm.so: the one header both
// sides of dlopen compile against. librpm (and its closure: sqlite, lua, gcrypt, popt, ...) is
// linked into the plugin alone, so a command that reads no rpm database never loads it; the
// loader (rpm.cc) opens the plugin when an image has one.
//
// The plugin exports one symbol, kRpmEntrySymbol, returning an RpmPluginAbi: a versioned struct
// of function pointers, checked (abi_version, struct_size) before anything is called. What
// crosses is plain C data (NUL-terminated strings, numbers, bytes with their length) handed to
// callbacks, which copy what they keep before returning; no C++ object crosses.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kernodeck::os::rpmplugin {

// Raised whenever a member changes type or meaning, or one is added.
inline constexpr uint32_t kAbiVersion = 1;

// The exported entry point, `extern "C" const RpmPluginAbi* kdk_rpm_plugin_abi()`.
inline constexpr const char* kEntrySymbol = "kdk_rpm_plugin_abi";

// The plugin's file name, looked for beside the executable and in ../lib/kernodeck/ (rpm.cc).
inline constexpr const char* kFileName = "libkernodeck_rpm.so";

// One installed package's header facts (null: not recorded).
struct PackageFacts {
  const char* name;
  const char* evr;  // epoch:version-release
  const char* architecture;
  const char* source_rpm;
  const char* vendor;
  const char* sha256_header;  // RPMTAG_SHA256HEADER
  const char* sigmd5;         // RPMTAG_SIGMD5 as hex
};

// One file of the package reported last. `verify` is 0 for a file rpm -V leaves out (not
// installed, on a shared network path, %ghost): it is owned but not checked.
struct FileFacts {
  const char* path;  // as recorded (leading '/')
  int verify;
  int kind;  // 0 regular file, 1 directory, 2 symlink, 3 other
  int config, missing_ok;
  int has_mode;
  uint32_t mode;  // permission bits, when has_mode
  int has_size;
  int64_t size;          // when has_size
  int digest_algorithm;  // rpm's PGPHASHALGO number, 0 when no digest is to be checked
  const unsigned char* digest;
  size_t digest_len;
  const char* link_target;  // symlinks whose target is to be checked, else null
};

// Where the plugin reports what it reads; ctx is the loader's.
struct Sink {
  void* ctx;
  void (*package)(void* ctx, const PackageFacts* p);
  void (*file)(void* ctx, const FileFacts* f);
};

// The result of read_database.
enum ReadStatus : int { kReadOk = 0, kReadConfig = 1, kReadOpen = 2, kReadIterate = 3 };

struct RpmPluginAbi {
  uint32_t abi_version;
  uint32_t struct_size;
  // librpm's version (RPMVERSION), for `kernodeck version`.
  const char* librpm_version;
  // Reads the database in the host directory `dir` (rpmdb.sqlite or Packages) read-only, without
  // digest or signature checks of the headers; librpm's last error, if any, is written to `error`
  // (NUL-terminated, truncated to error_size). Serialised inside: librpm keeps global state.
  int (*read_database)(const char* dir, const Sink* sink, char* error, size_t error_size);
};

}  // namespace kernodeck::os::rpmplugin
