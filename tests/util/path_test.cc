// util/path.h: both lexical rule sets on the same hostile names, side by side.
#include "kernodeck/util/path.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace kernodeck::util {
namespace {

using namespace std::string_literals;

constexpr const char* kNone = "<none>";  // no cleaned form under Confined

struct Case {
  std::string in;
  const char* confined;   // cleanConfined, or kNone
  const char* rooted;     // cleanRooted().path
  bool absolute, dotdot;  // cleanRooted's notes
};

TEST(Path, ConfinedAndRootedRulesOnHostileNames) {
  const Case cases[] = {
      {"a/b/c", "a/b/c", "a/b/c", false, false},
      {"", "", "", false, false},
      {".", "", "", false, false},
      {"./", "", "", false, false},
      {"/", "", "", true, false},
      {"//", "", "", true, false},
      {"a//b///c", "a/b/c", "a/b/c", false, false},
      {"a/b/", "a/b", "a/b", false, false},
      {"./a/./b/.", "a/b", "a/b", false, false},
      {"/etc/passwd", "etc/passwd", "etc/passwd", true, false},
      {"//etc//passwd//", "etc/passwd", "etc/passwd", true, false},
      {"a/../b", "b", "b", false, true},
      {"a/b/../../c", "c", "c", false, true},
      {"a/..", "", "", false, true},
      {"..", kNone, "", false, true},
      {"../etc/passwd", kNone, "etc/passwd", false, true},
      {"a/../../etc/passwd", kNone, "etc/passwd", false, true},
      {"/../../etc/x", kNone, "etc/x", true, true},
      {"a/b/../../../c", kNone, "c", false, true},
      {"...", "...", "...", false, false},
      {"a/..b/c..", "a/..b/c..", "a/..b/c..", false, false},
      {".hidden/./x", ".hidden/x", ".hidden/x", false, false},
      {"a\0b"s, kNone, nullptr, false, false},  // NUL: Confined refuses, Rooted keeps the byte
      {"ok\0/../../../etc"s, kNone, nullptr, false, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("'" + c.in + "'");
    std::optional<std::string> confined = cleanConfined(c.in);
    if (c.confined == kNone) {
      EXPECT_FALSE(confined.has_value()) << *confined;
    } else {
      ASSERT_TRUE(confined.has_value());
      EXPECT_EQ(*confined, c.confined);
    }
    RootedPath r = cleanRooted(c.in);
    if (c.rooted) {
      EXPECT_EQ(r.path, c.rooted);
    }
    EXPECT_EQ(r.absolute, c.absolute);
    EXPECT_EQ(r.dotdot, c.dotdot);
  }
  EXPECT_EQ(cleanRooted("a\0b"s).path, "a\0b"s);
  EXPECT_EQ(cleanRooted("ok\0/../../../etc"s).path, "etc");
}

TEST(Path, NormalFormIsRecognised) {
  const struct {
    const char* in;
    bool normal;
  } cases[] = {
      {"a", true},   {"a/b/c", true}, {".a/b..", true}, {"", false},    {"/", false},      {"/a", false},
      {"a/", false}, {"a//b", false}, {"./a", false},   {"a/.", false}, {"a/../b", false}, {"..", false},
  };
  for (const auto& c : cases) EXPECT_EQ(isNormalPath(c.in), c.normal) << c.in;
  // Whatever either rule cleans is normal, or the root.
  for (const char* in : {"x/./y//", "/../a/b/../c", "a/b/.."}) {
    std::string r = cleanRooted(in).path;
    EXPECT_TRUE(r.empty() || isNormalPath(r)) << in;
  }
}

}  // namespace
}  // namespace kernodeck::util
