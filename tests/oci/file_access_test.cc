// Members of a tar archive (docker-archive, oci-archive) reached through links: what stops a
// link is named, a cycle with its members in order, where "does not exist" once hid it (issue 30).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "kernodeck/oci/source.h"
#include "tar_builder.h"

namespace oci_file_access_test {

using namespace kernodeck::oci;
using kdktest::makeTar;
using kdktest::TarEntry;

namespace {

// The archive written to a fresh temporary file; its path.
std::string archiveOf(const std::vector<TarEntry>& entries) {
  char name[] = "/tmp/kdk-file-access-XXXXXX";
  int fd = ::mkstemp(name);
  EXPECT_GE(fd, 0);
  ::close(fd);
  std::ofstream(name, std::ios::binary) << makeTar(entries);
  return name;
}

}  // namespace

TEST(TarAccess, LinksAreFollowedAndWhatStopsThemIsNamed) {
  struct Case {
    const char* name;
    std::vector<TarEntry> entries;
    std::string error;  // empty: manifest.json reads as "[]"
  };
  const std::vector<Case> cases = {
      {"plain", {{"manifest.json", 'f', "[]", ""}}, ""},
      {"through a symlink", {{"real.json", 'f', "[]", ""}, {"manifest.json", 'l', "", "real.json"}}, ""},
      {"missing", {{"other", 'f', "x", ""}}, "manifest.json does not exist"},
      {"dangling", {{"manifest.json", 'l', "", "gone.json"}}, "links to gone.json, which does not exist"},
      {"cycle",
       {{"manifest.json", 'l', "", "a"}, {"a", 'l', "", "b"}, {"b", 'l', "", "manifest.json"}},
       "manifest.json is a symlink cycle: manifest.json -> a -> b -> manifest.json"},
      {"self", {{"manifest.json", 'l', "", "manifest.json"}}, "is a symlink cycle: manifest.json -> manifest.json"},
  };
  for (const auto& c : cases) {
    std::string file = archiveOf(c.entries);
    auto fa = openTarAccess(file);
    ASSERT_TRUE(fa.ok()) << c.name << ": " << fa.error().message;
    auto text = (*fa)->read("manifest.json", 1 << 20);
    if (c.error.empty()) {
      ASSERT_TRUE(text.ok()) << c.name << ": " << text.error().message;
      EXPECT_EQ(*text, "[]") << c.name;
      EXPECT_TRUE((*fa)->exists("manifest.json")) << c.name;
    } else {
      ASSERT_FALSE(text.ok()) << c.name;
      EXPECT_NE(text.error().message.find(c.error), std::string::npos) << c.name << ": " << text.error().message;
      EXPECT_FALSE((*fa)->exists("manifest.json")) << c.name;
      EXPECT_EQ((*fa)->size("manifest.json"), -1) << c.name;
    }
    ::unlink(file.c_str());
  }
}

}  // namespace oci_file_access_test
