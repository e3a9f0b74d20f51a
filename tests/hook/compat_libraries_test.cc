// Issue 49, section 5: the hook opens an image's compat library beneath the container's root by
// descriptor (util::openInRoot), never by the string root + resolved path. The check-then-use
// window is opened by hand: the path is resolved through the view, then a directory on it is
// swapped for a link to a "host" library, then the library is opened. No host file is read.
#include "kernodeck/hook/compat_libraries.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../gpu/elf_note_fixture.h"
#include "kernodeck/oci/fs_view.h"
#include "kernodeck/util/safe_file.h"

namespace hook_compat_libraries_test {

using namespace kernodeck;
namespace fs = std::filesystem;

namespace {

void write(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string note(const std::string& cuda) {
  return kdktest::elfWithFwdCompatNote(R"({"format":1,"CUDA version":")" + cuda + R"(","driver":[535,550]})");
}

TEST(CompatLibraryOpen, ADirectorySwappedForAHostLinkAfterItWasResolvedIsNotFollowed) {
  char t[] = "/tmp/kdk-compat-swap-XXXXXX";
  ASSERT_NE(mkdtemp(t), nullptr);
  std::string dir = t, root = dir + "/root", host = dir + "/host";
  const std::string name = "libcuda.so.575.57.08", compat = "usr/local/cuda-12.9/compat";
  write(root + "/" + compat + "/" + name, note("12.9"));
  write(host + "/compat/" + name, note("99.9"));  // the host's file, which must never be read
  auto view = oci::openDirView(root);
  ASSERT_TRUE(view.ok());
  auto resolved = (*view)->resolve(compat + "/" + name, true);
  ASSERT_TRUE(resolved.ok());
  int rootFd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(rootFd, 0);
  hook::CompatLibrary before = hook::readCompatLibrary(rootFd, *resolved, name);
  ASSERT_TRUE(before.note) << before.problem;
  EXPECT_EQ(before.note->cudaVersion, "12.9");

  // Between the check and the use: the compat directory becomes a link to the host's.
  fs::rename(root + "/" + compat, root + "/" + compat + ".orig");
  fs::create_directory_symlink(host + "/compat", root + "/" + compat);
  hook::CompatLibrary after = hook::readCompatLibrary(rootFd, *resolved, name);
  EXPECT_FALSE(after.note && after.note->cudaVersion == "99.9") << "the host's library was read";
  EXPECT_FALSE(after.note) << "a note was read through the swapped link";
  EXPECT_FALSE(after.problem.empty());
  // A link that stays inside the root is resolved there (openat2's RESOLVE_IN_ROOT), or refused
  // (the O_NOFOLLOW walk where the kernel lacks openat2): never the host's path of the same name.
  fs::remove(root + "/" + compat);
  fs::create_directory_symlink("/" + compat + ".orig", root + "/" + compat);
  hook::CompatLibrary inside = hook::readCompatLibrary(rootFd, *resolved, name);
  if (inside.note) {
    EXPECT_EQ(inside.note->cudaVersion, "12.9");
  }
  ::close(rootFd);
  fs::remove_all(dir);
}

TEST(CompatLibraryOpen, OpenInRootRefusesDotDotAndKeepsAbsoluteLinksInside) {
  char t[] = "/tmp/kdk-open-in-root-XXXXXX";
  ASSERT_NE(mkdtemp(t), nullptr);
  std::string root = t;
  write(root + "/etc/os-release", "ID=inside\n");
  fs::create_directory_symlink("/etc", root + "/etc-link");  // absolute: the container's /etc
  int rootFd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(rootFd, 0);
  auto up = util::openInRoot(rootFd, "../../etc/passwd", O_RDONLY);
  ASSERT_FALSE(up.ok());
  EXPECT_TRUE(up.error().is(ErrorKind::Unsafe)) << up.error().message;
  auto viaLink = util::openInRoot(rootFd, "etc-link/os-release", O_RDONLY);
  if (viaLink.ok()) {  // openat2: resolved inside the root, the container's file
    char buf[64] = {};
    ssize_t n = ::read(*viaLink, buf, sizeof buf - 1);
    ::close(*viaLink);
    EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "ID=inside\n");
  } else {  // the fallback walk refuses the link
    EXPECT_TRUE(viaLink.error().is(ErrorKind::Unsafe)) << viaLink.error().message;
  }
  ::close(rootFd);
  fs::remove_all(root);
}

}  // namespace

}  // namespace hook_compat_libraries_test
