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
