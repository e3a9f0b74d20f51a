// util/path.h: both lexical rule sets on the same hostile names, side by side.
#include "kernodeck/util/path.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace util_path_test {

using namespace kernodeck;
using namespace kernodeck::util;

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

// Both rules take a name already in normal form as it is, without their list of components
// (issue 31). On random names made of the fragments that matter, they agree with the
// component-by-component rules written out here.
TEST(Path, NormalNamesShortcutAgreesWithTheComponentRules) {
  auto components = [](const std::string& p) {
    std::vector<std::string> out;
    for (size_t start = 0; start <= p.size();) {
      size_t end = std::min(p.find('/', start), p.size());
      out.push_back(p.substr(start, end - start));
      start = end + 1;
    }
    return out;
  };
  auto join = [](const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& c : parts) out += (out.empty() ? "" : "/") + c;
    return out;
  };
  const char* fragments[] = {"a", "bc", ".", "..", "", "/", "./", "..a", "a.", "//", "NUL"};
  std::mt19937 rng(31);
  for (int i = 0; i < 40000; ++i) {
    std::string name;
    for (int n = static_cast<int>(rng() % 7); n >= 0; --n) {
      std::string f = fragments[rng() % std::size(fragments)];
      name += f == "NUL" ? "\0"s : f;
      if (rng() % 2) name += '/';
    }
    std::vector<std::string> rooted, confined;
    bool dotdot = false, escapes = false;
    for (const auto& c : components(name)) {
      if (c.empty() || c == ".") continue;
      if (c != "..") {
        rooted.push_back(c), confined.push_back(c);
        continue;
      }
      dotdot = true;
      if (!rooted.empty()) rooted.pop_back();
      if (confined.empty()) escapes = true;
      if (!confined.empty()) confined.pop_back();
    }
    RootedPath r = cleanRooted(name);
    EXPECT_EQ(r.path, join(rooted)) << name;
    EXPECT_EQ(r.dotdot, dotdot) << name;
    EXPECT_EQ(r.absolute, !name.empty() && name.front() == '/') << name;
    bool nul = name.find('\0') != std::string::npos;
    EXPECT_EQ(cleanConfined(name), escapes || nul ? std::nullopt : std::optional<std::string>(join(confined))) << name;
  }
}

}  // namespace
}  // namespace util_path_test
