// util::makeDirs makes the folder it is given, relative paths relative to the current folder.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "kernodeck/util/safe_file.h"

namespace {

bool isDir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
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
