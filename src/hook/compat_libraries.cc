// See compat_libraries.h.
#include "kernodeck/hook/compat_libraries.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/unique_fd.h"

namespace kernodeck::hook {

namespace {

constexpr size_t kMaxLibraries = 16;

}  // namespace

CompatLibrary readCompatLibrary(int rootFd, const std::string& resolved, const std::string& name) {
  CompatLibrary lib;
  lib.path = resolved.starts_with("/") ? resolved : "/" + resolved;
  lib.driver = gpu::compatLibraryDriver(name);
  // Opened beneath the root by descriptor, never by the string root + path: a directory swapped for
  // a link to the host since `resolved` was resolved cannot lead out of the container.
  auto opened = util::openInRoot(rootFd, resolved, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (!opened.ok()) {
    lib.problem = "cannot open it: " + opened.error().message;
    return lib;
  }
  int fd = *opened;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    lib.problem = "not a regular file";
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

std::vector<CompatLibrary> readCompatLibraries(const oci::FsView& view, const std::string& root) {
  std::vector<CompatLibrary> out;
  std::set<std::string> seen;
  util::UniqueFd rootFd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (rootFd.fd < 0) return out;
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
      out.push_back(readCompatLibrary(rootFd.fd, *resolved, name));
      if (out.size() >= kMaxLibraries) return out;
    }
  }
  return out;
}

}  // namespace kernodeck::hook
