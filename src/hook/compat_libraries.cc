// See compat_libraries.h.
#include "kernodeck/hook/compat_libraries.h"

#include <fcntl.h>
#include <unistd.h>

#include <set>

#include "kernodeck/oci/fs_view.h"

namespace kernodeck::hook {

namespace {

constexpr size_t kMaxLibraries = 16;

// The note of the file at `path` (a resolved path inside the root, so no link to follow).
CompatLibrary readOne(const std::string& root, const std::string& resolved, const std::string& name) {
  CompatLibrary lib;
  lib.path = resolved.starts_with("/") ? resolved : "/" + resolved;
  lib.driver = gpu::compatLibraryDriver(name);
  int fd = ::open((root + lib.path).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    lib.problem = "cannot open it";
    return lib;
  }
  auto reader = [fd](uint64_t offset, size_t len) {
    std::string out(len, '\0');
    size_t got = 0;
    while (got < len) {
      ssize_t n = ::pread(fd, out.data() + got, len - got, static_cast<off_t>(offset + got));
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    out.resize(got);
    return out;
  };
  auto note = gpu::readFwdCompatNote(reader);
  ::close(fd);
  if (note.ok())
    lib.note = *note;
  else
    lib.problem = note.error().message;
  return lib;
}

}  // namespace

std::vector<CompatLibrary> readCompatLibraries(const oci::FsView& view, const std::string& root) {
  std::vector<CompatLibrary> out;
  std::set<std::string> seen;
  for (const auto& dir : view.list("usr/local")) {
    if (!dir.starts_with("cuda")) continue;
    auto compat = view.resolve("usr/local/" + dir + "/compat", true);
    if (!compat.ok()) continue;
    for (const auto& name : view.list(*compat)) {
      if (gpu::compatLibraryDriver(name).empty()) continue;
      auto resolved = view.resolve(*compat + "/" + name, true);
      if (!resolved.ok() || !seen.insert(*resolved).second) continue;
      auto node = view.stat(*resolved);
      if (!node || node->kind != oci::EntryKind::File) continue;
      out.push_back(readOne(root, *resolved, name));
      if (out.size() >= kMaxLibraries) return out;
    }
  }
  return out;
}

}  // namespace kernodeck::hook
