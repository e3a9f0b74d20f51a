// util::makeDirs makes the folder it is given, relative paths relative to the current folder;
// util::writeBeneath writes beneath a root it does not trust, in both of its replace modes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernodeck/util/safe_file.h"

namespace util_safe_file_test {

namespace {

bool isDir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tempDir() {
  char tmpl[] = "/tmp/kdk-beneath-XXXXXX";
  return ::mkdtemp(tmpl) ? tmpl : "";
}

}  // namespace

TEST(SafeFile, MakeDirsKeepsRelativePathsRelative) {
  char tmpl[] = "/tmp/kdk-makedirs-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string base = tmpl;
  ASSERT_EQ(::mkdir((base + "/cwd").c_str(), 0755), 0);
  auto old = std::filesystem::current_path();
  std::filesystem::current_path(base + "/cwd");
  struct Case {
    const char* given;
    const char* made;  // relative to base
  } cases[] = {{"a/b", "cwd/a/b"}, {"../sibling/c", "sibling/c"}, {"./d//e/", "cwd/d/e"}};
  for (const auto& c : cases) {
    EXPECT_TRUE(kernodeck::util::makeDirs(c.given)) << c.given;
    EXPECT_TRUE(isDir(base + "/" + c.made)) << c.given;
  }
  EXPECT_TRUE(kernodeck::util::makeDirs(base + "/abs/f"));
  EXPECT_TRUE(isDir(base + "/abs/f"));
  EXPECT_FALSE(isDir("/sibling"));  // "../sibling" was never made at the root
  std::filesystem::current_path(old);
  std::filesystem::remove_all(base);
}

// Either mode replaces a file already there, makes the missing folders, and leaves no temporary
// file behind; a link planted where the file goes is replaced, never followed; a planted link
// on a folder on the way, or "..", is refused.
TEST(SafeFile, WriteBeneathReplacesWithoutFollowingLinks) {
  using kernodeck::util::Replace;
  for (Replace mode : {Replace::Atomic, Replace::UnlinkFirst}) {
    std::string root = tempDir(), outside = tempDir();
    ASSERT_FALSE(root.empty() || outside.empty());
    std::ofstream(outside + "/victim") << "untouched";
    auto w = [&](const std::string& rel, const std::string& text) {
      return kernodeck::util::writeBeneath(root, rel, text, 0644, mode);
    };
    ASSERT_TRUE(w("run/kernodeck/host.json", "one").ok());
    ASSERT_TRUE(w("run/kernodeck/host.json", "two").ok());
    EXPECT_EQ(slurp(root + "/run/kernodeck/host.json"), "two");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(root + "/run/kernodeck"), {}), 1);

    ASSERT_EQ(::symlink((outside + "/victim").c_str(), (root + "/run/kernodeck/link.json").c_str()), 0);
    ASSERT_TRUE(w("run/kernodeck/link.json", "mine").ok());
    EXPECT_FALSE(std::filesystem::is_symlink(root + "/run/kernodeck/link.json"));
    EXPECT_EQ(slurp(root + "/run/kernodeck/link.json"), "mine");
    EXPECT_EQ(slurp(outside + "/victim"), "untouched");

    ASSERT_EQ(::symlink(outside.c_str(), (root + "/etc").c_str()), 0);
    EXPECT_FALSE(w("etc/victim", "x").ok());
    EXPECT_FALSE(w("run/../../victim", "x").ok());
    EXPECT_EQ(slurp(outside + "/victim"), "untouched");

    ASSERT_EQ(::mkdir((root + "/run/kernodeck/dir.json").c_str(), 0755), 0);
    EXPECT_FALSE(w("run/kernodeck/dir.json", "x").ok());  // a folder is not removed to make room
    EXPECT_TRUE(std::filesystem::is_directory(root + "/run/kernodeck/dir.json"));
    std::filesystem::remove_all(root);
    std::filesystem::remove_all(outside);
  }
}

// writeOutputFile: a path the user named is reached without following a link another user
// planted (issue 39 section 8), and devices, FIFOs and the kernel's /proc links are written
// into, not replaced.
TEST(SafeFile, WriteOutputFileFollowsOnlyTrustedLinks) {
  using kernodeck::util::writeOutputFile;
  std::string d = tempDir();
  ASSERT_FALSE(d.empty());
  // Plain files, relative paths and links of one's own in a private folder.
  ASSERT_TRUE(writeOutputFile(d + "/a.json", "one\n").ok());
  EXPECT_EQ(slurp(d + "/a.json"), "one\n");
  ASSERT_EQ(::symlink("a.json", (d + "/mine").c_str()), 0);
  ASSERT_TRUE(writeOutputFile(d + "/mine", "two\n").ok());
  struct stat st {};
  ASSERT_EQ(::lstat((d + "/mine").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "one's own link is followed: its target is replaced";
  EXPECT_EQ(slurp(d + "/a.json"), "two\n");
  ::mkdir((d + "/sub").c_str(), 0755);
  ASSERT_TRUE(writeOutputFile(d + "/sub/../b.json", "three\n").ok());
  EXPECT_EQ(slurp(d + "/b.json"), "three\n");
  EXPECT_FALSE(writeOutputFile(d + "/sub", "x").ok());  // a directory
  EXPECT_FALSE(writeOutputFile(d + "/nodir/x.json", "x").ok());
  EXPECT_TRUE(kernodeck::util::checkOutputFolder(d + "/nodir/deeper").ok());  // absent: the caller makes it
  EXPECT_TRUE(kernodeck::util::checkOutputFolder(d + "/sub").ok());
  EXPECT_TRUE(kernodeck::util::checkOutputFolder("relative/folder").ok());
  // Devices and the kernel's links are written into.
  EXPECT_TRUE(writeOutputFile("/dev/null", "nothing\n").ok());
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_TRUE(writeOutputFile("/dev/stderr", "").ok());
  // In place: a regular file keeps its inode (a bind-mounted termination log).
  ASSERT_EQ(::stat((d + "/b.json").c_str(), &st), 0);
  ino_t ino = st.st_ino;
  ASSERT_TRUE(writeOutputFile(d + "/b.json", "four\n", kernodeck::util::OutputWrite::InPlace).ok());
  ASSERT_EQ(::stat((d + "/b.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_ino, ino);
  EXPECT_EQ(slurp(d + "/b.json"), "four\n");

  if (::geteuid() != 0) GTEST_SKIP() << "planting another user's link needs root";
  // A link owned by another user, in a folder root owns that its group can write (the kernel's
  // protected_symlinks rule does not cover it: not sticky) and in a sticky world-writable one.
  for (mode_t mode : {mode_t(0775), mode_t(01777), mode_t(0755)}) {
    std::string shared = d + "/shared" + std::to_string(mode);
    ASSERT_EQ(::mkdir(shared.c_str(), 0755), 0);
    ASSERT_EQ(::chmod(shared.c_str(), mode), 0);
    ASSERT_EQ(::symlink((d + "/victim").c_str(), (shared + "/out").c_str()), 0);
    ASSERT_EQ(::lchown((shared + "/out").c_str(), 65534, 65534), 0);
    ASSERT_TRUE(writeOutputFile(d + "/victim", "precious\n").ok());
    for (auto how : {kernodeck::util::OutputWrite::Replace, kernodeck::util::OutputWrite::InPlace}) {
      auto w = writeOutputFile(shared + "/out", "report\n", how);
      ASSERT_FALSE(w.ok()) << mode;
      EXPECT_NE(w.error().message.find("uid 65534"), std::string::npos) << w.error().message;
      EXPECT_EQ(slurp(d + "/victim"), "precious\n");
      // Through a folder link too.
      EXPECT_FALSE(writeOutputFile(shared + "/out/../x", "report\n", how).ok());
    }
    // An output folder (dossier build DIR, --work DIR) reached through the link.
    EXPECT_EQ(kernodeck::util::checkOutputFolder(shared + "/out").error().kind, kernodeck::ErrorKind::Unsafe);
    // Root's own link in a folder others can write is followed; another user's FIFO there is not
    // written into.
    ASSERT_EQ(::symlink((d + "/rootvictim").c_str(), (shared + "/rootlink").c_str()), 0);
    EXPECT_TRUE(writeOutputFile(shared + "/rootlink", "ok\n", kernodeck::util::OutputWrite::InPlace).ok());
    EXPECT_EQ(slurp(d + "/rootvictim"), "ok\n");
    if (mode != 0755) {  // in a folder only root writes, a FIFO is written into (and would block here)
      ASSERT_EQ(::mkfifo((shared + "/fifo").c_str(), 0666), 0);
      ASSERT_EQ(::chown((shared + "/fifo").c_str(), 65534, 65534), 0);
      EXPECT_FALSE(writeOutputFile(shared + "/fifo", "report\n").ok()) << mode;
    }
  }
  std::filesystem::remove_all(d);
}

}  // namespace util_safe_file_test
