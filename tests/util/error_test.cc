// Errors are kinds, not strings (issue 32 §4): Error::is, the context helper that keeps the kind,
// the stable name of each kind, and the one place an exit code is derived from a kind.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernodeck/report/report.h"
#include "kernodeck/util/result.h"

namespace util_error_test {

using kernodeck::Error;
using kernodeck::ErrorKind;
using kernodeck::Result;
using kernodeck::Status;

namespace {

// Every kind with its stable name and the exit code a command stopped by it ends with: 2 when the
// input was read but is not what the command takes, 3 when the work could not be done.
struct KindCase {
  ErrorKind kind;
  Error (*make)(std::string);
  const char* name;
  int exit;
};
const KindCase kKinds[] = {
    {ErrorKind::NotFound, Error::NotFound, "not_found", 3},
    {ErrorKind::Invalid, Error::Invalid, "invalid", 2},
    {ErrorKind::Io, Error::Io, "io", 3},
    {ErrorKind::Unsupported, Error::Unsupported, "unsupported", 3},
    {ErrorKind::Corrupt, Error::Corrupt, "corrupt", 2},
    {ErrorKind::Unsafe, Error::Unsafe, "unsafe", 2},
    {ErrorKind::Auth, Error::Auth, "auth", 3},
    {ErrorKind::Unreachable, Error::Unreachable, "unreachable", 3},
    {ErrorKind::Timeout, Error::Timeout, "timeout", 3},
    {ErrorKind::Signature, Error::Signature, "signature", 3},
    {ErrorKind::Failed, Error::Failed, "failed", 3},
};

}  // namespace

TEST(ErrorKinds, EachFactoryMakesItsKindAndIsIsTrueForThatKindAlone) {
  for (const auto& c : kKinds) {
    Error e = c.make("blob sha256:ab is gone");
    EXPECT_EQ(e.message, "blob sha256:ab is gone");
    for (const auto& other : kKinds)
      EXPECT_EQ(e.is(other.kind), other.kind == c.kind) << c.name << " vs " << other.name;
  }
}

TEST(ErrorKinds, EveryKindHasItsOwnStableName) {
  std::set<std::string> seen;
  for (const auto& c : kKinds) {
    EXPECT_STREQ(kernodeck::errorKindName(c.kind), c.name);
    EXPECT_STREQ(Error(c.kind, "x").kindName(), c.name);
    EXPECT_TRUE(seen.insert(c.name).second) << c.name << " is the name of two kinds";
  }
  // The table above lists every kind: the one after the last has no name.
  EXPECT_STREQ(kernodeck::errorKindName(static_cast<ErrorKind>(static_cast<int>(ErrorKind::Failed) + 1)), "?");
}

TEST(ErrorKinds, ContextPrefixesTheMessageAndKeepsTheKind) {
  for (const auto& c : kKinds) {
    const Error inner = c.make("manifest.json: not JSON");
    Error outer = inner.context("layout /srv/img");
    EXPECT_TRUE(outer.is(c.kind)) << c.name;
    EXPECT_EQ(outer.message, "layout /srv/img: manifest.json: not JSON");
    EXPECT_EQ(inner.message, "manifest.json: not JSON");  // the const& overload copies
    // Twice, as an error passes up through two callers; the rvalue overload moves.
    Error twice = c.make("gone").context("layer 3").context("index sha256:cd");
    EXPECT_TRUE(twice.is(c.kind)) << c.name;
    EXPECT_EQ(twice.message, "index sha256:cd: layer 3: gone");
  }
}

TEST(ErrorKinds, TheExitCodeIsDerivedFromTheKind) {
  for (const auto& c : kKinds) {
    EXPECT_EQ(kernodeck::report::exitCodeOf(c.make("m")), c.exit) << c.name;
    // The message and any context added on the way up do not change it.
    EXPECT_EQ(kernodeck::report::exitCodeOf(c.make("invalid corrupt").context("unsafe")), c.exit) << c.name;
  }
  EXPECT_EQ(kernodeck::report::exitCodeOf(Error::Invalid("x")), kernodeck::report::kExitUsage);
  EXPECT_EQ(kernodeck::report::exitCodeOf(Error::Io("x")), kernodeck::report::kExitIncomplete);
}

TEST(ErrorKinds, ResultAndStatusCarryTheErrorWhole) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  Status bad = Error::Unsafe("../etc/passwd leaves the root");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.error().is(ErrorKind::Unsafe));
  EXPECT_EQ(bad.error().message, "../etc/passwd leaves the root");
  Result<int> r = Error::Timeout("skopeo did not finish within 30 s");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().is(ErrorKind::Timeout));
  Result<int> v = 7;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 7);
}

}  // namespace util_error_test
