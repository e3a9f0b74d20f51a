// util::openPrivateDir: the local cache's directory is the user's own with mode 0700, made so
// when absent, and refused with one line naming it otherwise.
#include "kernodeck/util/private_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace util_private_dir_test {

namespace {

using kernodeck::util::openPrivateDir;

std::string freshDir() {
  char t[] = "/tmp/kdk-privdir-XXXXXX";
  if (!::mkdtemp(t)) std::abort();
  return t;
}

unsigned modeOf(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

TEST(PrivateDir, MadeWith0700WhenAbsentAndAcceptedAfter) {
  std::string root = freshDir();
  std::string dir = root + "/a/b/cache";
  mode_t old = ::umask(0);  // even with a permissive umask
  auto made = openPrivateDir(dir, "cache directory");
  ::umask(old);
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ(modeOf(dir), 0700u);
  EXPECT_TRUE(openPrivateDir(dir, "cache directory").ok());
  std::system(("rm -rf " + root).c_str());
}

TEST(PrivateDir, RefusedWhenOthersMayWriteOrItIsNotADirectory) {
  std::string root = freshDir();
  struct Case {
    std::string setup, path, expect;
  } cases[] = {
      {"mkdir -m 755 " + root + "/open", root + "/open", "has mode 0755"},
      {"mkdir -m 770 " + root + "/group", root + "/group", "has mode 0770"},
      {"mkdir -m 700 " + root + "/target && ln -s target " + root + "/link", root + "/link", "is a symbolic link"},
      {"touch " + root + "/file", root + "/file", "is not a directory"},
  };
  for (const auto& c : cases) {
    ASSERT_EQ(std::system(c.setup.c_str()), 0) << c.setup;
    auto r = openPrivateDir(c.path, "cache directory");
    ASSERT_FALSE(r.ok()) << c.path;
    EXPECT_TRUE(r.error().is(kernodeck::ErrorKind::Unsafe));
    EXPECT_NE(r.error().message.find("cache directory " + c.path + " "), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
  // A trailing slash does not make the link count as its target.
  auto slash = openPrivateDir(root + "/link/", "cache directory");
  ASSERT_FALSE(slash.ok());
  EXPECT_NE(slash.error().message.find("is a symbolic link"), std::string::npos) << slash.error().message;
  EXPECT_EQ(modeOf(root + "/open"), 0755u);  // refused, not changed
  std::system(("rm -rf " + root).c_str());
}

TEST(PrivateDir, RefusedWhenAnotherUserOwnsIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  std::string root = freshDir();
  ASSERT_EQ(std::system(("mkdir -m 700 " + root + "/theirs && chown 4242 " + root + "/theirs").c_str()), 0);
  auto r = openPrivateDir(root + "/theirs", "cache directory");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("owned by uid 4242"), std::string::npos) << r.error().message;
  std::system(("rm -rf " + root).c_str());
}

}  // namespace

}  // namespace util_private_dir_test
