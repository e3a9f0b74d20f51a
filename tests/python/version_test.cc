// Vectors from pypa/packaging's test suite (versions, specifiers, markers).
#include "kernodeck/python/version.h"

#include <gtest/gtest.h>

#include "kernodeck/python/marker.h"
#include "kernodeck/python/requirement.h"
#include "kernodeck/python/specifier.h"

namespace python_version_test {

using namespace kernodeck::python;

TEST(Pep440, Normalisation) {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {
      {"1.0a", "1.0a0"},
      {"1.0alpha1", "1.0a1"},
      {"1.0-1", "1.0.post1"},
      {"1.0.POST1", "1.0.post1"},
      {"1.0rev", "1.0.post0"},
      {"v1.0", "1.0"},
      {"1.0+ubuntu-1", "1.0+ubuntu.1"},
      {"1.0c1", "1.0rc1"},
      {"1.0.dev", "1.0.dev0"},
      {"1!2.0", "1!2.0"},
      {" 1.0 ", "1.0"},
      {"01.02", "1.2"},
      {"1.0preview2", "1.0rc2"},
      {"1.0_beta_3", "1.0b3"},
      {"2.1.0+cu121", "2.1.0+cu121"},
      {"1.0.r4", "1.0.post4"},
      {"1.0-dev-3", "1.0.dev3"},
  };
  for (const auto& c : cases) {
    auto v = Version::parse(c.in);
    ASSERT_TRUE(v.ok()) << c.in;
    EXPECT_EQ(v->str(), c.out) << c.in;
  }
  for (const char* bad : {"french toast", "1.0+", "1.0+_foo", "", "1..0", "1.0.post1-1-1", "+1.0", "1.0+a+b"})
    EXPECT_FALSE(Version::parse(bad).ok()) << bad;
}

TEST(Pep440, Ordering) {
  const char* ordered[] = {
      "1.0.dev456",
      "1.0a1",
      "1.0a2.dev456",
      "1.0a12.dev456",
      "1.0a12",
      "1.0b1.dev456",
      "1.0b2",
      "1.0b2.post345.dev456",
      "1.0b2.post345",
      "1.0b2-346",
      "1.0c1.dev456",
      "1.0c1",
      "1.0rc2",
      "1.0c3",
      "1.0",
      "1.0.post456.dev34",
      "1.0.post456",
      "1.1.dev1",
      "1.2+123abc",
      "1.2+123abc456",
      "1.2+abc",
      "1.2+abc123",
      "1.2+abc123def",
      "1.2+1234.abc",
      "1.2+123456",
      "1.2.r32+123456",
      "1.2.rev33+123456",
      "1!1.0b2.post345.dev456",
      "1!1.0b2.post345",
      "1!1.0",
      "1!1.2.rev33+123456",
  };
  constexpr size_t n = sizeof ordered / sizeof ordered[0];
  for (size_t i = 0; i + 1 < n; ++i)
    EXPECT_LT(*Version::parse(ordered[i]), *Version::parse(ordered[i + 1])) << ordered[i] << " < " << ordered[i + 1];
  EXPECT_EQ(*Version::parse("1.0"), *Version::parse("1.0.0"));
  EXPECT_EQ(canonicalizeName("Foo.Bar__baz"), "foo-bar-baz");
  EXPECT_EQ(canonicalizeName("_x_"), "-x-");
}

TEST(Pep440, SpecifiersMatch) {
  const std::pair<const char*, const char*> yes[] = {
      {"2.0", "==2"},
      {"2.0", "==2.0"},
      {"2.0", "==2.0.0"},
      {"2.0+deadbeef", "==2"},
      {"2.0+deadbeef", "==2.0"},
      {"2.0+deadbeef", "==2+deadbeef"},
      {"2.0+deadbeef.0", "==2.0.0+deadbeef.00"},
      {"2.dev1", "==2.*"},
      {"2a1", "==2.*"},
      {"2a1.post1", "==2.*"},
      {"2c1.post1.dev1", "==2.0.*"},
      {"2rc1", "==2.0.*"},
      {"2", "==2.*"},
      {"2", "==2.0.*"},
      {"2", "==0!2.*"},
      {"0!2", "==2.*"},
      {"2.0.0", "==2.*"},
      {"2.1+local.version", "==2.1.*"},
      {"2.1", "!=2"},
      {"2.0.1", "!=2.0.0"},
      {"2.0", "!=2.0+deadbeef"},
      {"2.0", "!=3.*"},
      {"2.1", "!=2.0.*"},
      {"2.0", ">=2"},
      {"2.0.post1", ">=2"},
      {"2.0.post1.dev1", ">=2"},
      {"3", ">=2"},
      {"2.0", "<=2"},
      {"2.0.dev1", "<=2"},
      {"2.0a1", "<=2"},
      {"2.0c1.post1.dev1", "<=2"},
      {"1", "<=2"},
      {"3", ">2"},
      {"2.1", ">2.0"},
      {"2.0.1", ">2"},
      {"2.1.post1", ">2"},
      {"2.1+local.version", ">2"},
      {"1", "<2"},
      {"2.0", "<2.1"},
      {"2.0.dev0", "<2.1"},
      {"1", "~=1.0"},
      {"1.0.1", "~=1.0"},
      {"1.1", "~=1.0"},
      {"1.9999999", "~=1.0"},
      {"1.1", "~=1.0a1"},
      {"2022.01.01", "~=2022.01.01"},
      {"2!1.0", "~=2!1.0"},
      {"2!1.0", "==2!1.*"},
      {"2!1.0", "!=1.0"},
      {"1.0", "<=2!0.1"},
      {"2!1.0", ">=2.0"},
      {"1.0", "<2!0.1"},
      {"2!1.0", ">2.0"},
      {"2.0.5", ">2.0dev"},
      {"1.0", "===1.0"},
      // PEP 440's exclusive >V excludes only V's own post-releases (packaging 26 ranges).
      {"1.0b2.post345", ">1.0b1.dev456"},
      {"1.0b2.post345", ">1.0b1"},
      {"1.0.post1", ">1.0b1"},
      {"1.0a1", "<1.0.post1"},
  };
  const std::pair<const char*, const char*> no[] = {
      {"2.1", "==2"},
      {"2.1", "==2.0.0"},
      {"2.0", "==2.0+deadbeef"},
      {"2.0", "==3.*"},
      {"2.1", "==2.0.*"},
      {"2.0", "!=2"},
      {"2.0+deadbeef", "!=2"},
      {"2.0+deadbeef", "!=2.0.0+deadbeef"},
      {"2a1", "!=2.*"},
      {"2.0.0", "!=2.0.*"},
      {"2.0.dev1", ">=2"},
      {"2.0a1", ">=2"},
      {"1", ">=2"},
      {"2.0.post1", "<=2"},
      {"3", "<=2"},
      {"1", ">2"},
      {"2.0.dev1", ">2"},
      {"2.0rc1", ">2"},
      {"2.0", ">2"},
      {"2.0.post1", ">2"},
      {"2.0+local.version", ">2"},
      {"1.0b1.post1", ">1.0b1"},
      {"1.0b1.post1.dev1", ">1.0b1"},
      {"1.0b1.dev456+local", ">1.0b1.dev456"},
      {"1.0.post1+x", ">1.0.post1"},
      {"1.0.post1.dev1", "<1.0.post1"},
      {"2.0.dev1", "<2"},
      {"2.0a1", "<2"},
      {"2.0", "<2"},
      {"2.post1", "<2"},
      {"3", "<2"},
      {"2.0", "~=1.0"},
      {"1.1.0", "~=1.0.0"},
      {"1.1.post1", "~=1.0.0"},
      {"1.0", "~=2!1.0"},
      {"2!1.0", "~=1.0"},
      {"2!1.0", "==1.0"},
      {"2!1.0", "==1.*"},
      {"2!1.0", "!=2!1.0"},
      {"1.0.0", "===1.0"},
  };
  for (const auto& [v, s] : yes) {
    auto spec = Specifier::parse(s);
    ASSERT_TRUE(spec.ok()) << s;
    EXPECT_TRUE(spec->contains(*Version::parse(v), true)) << v << " in " << s;
  }
  for (const auto& [v, s] : no) {
    auto spec = Specifier::parse(s);
    ASSERT_TRUE(spec.ok()) << s;
    EXPECT_FALSE(spec->contains(*Version::parse(v), true)) << v << " not in " << s;
  }
  for (const char* bad :
       {"~=1", "~=1.0+local", ">=1.0+local", "<1.*", "==1.0.*.*", "1.0", "=>1.0", "==", "~= 1.0.dev1+x"})
    EXPECT_FALSE(Specifier::parse(bad).ok()) << bad;
}

TEST(Pep440, PrereleaseDefaults) {
  auto set = *SpecifierSet::parse(">=1.0");
  EXPECT_FALSE(set.contains(*Version::parse("2.0rc1")));                              // default: no pre-releases
  EXPECT_TRUE(set.contains(*Version::parse("2.0rc1"), true));                         // as pip check asks
  EXPECT_TRUE(SpecifierSet::parse(">=1.0rc1")->contains(*Version::parse("2.0rc1")));  // the spec names one
  EXPECT_FALSE(SpecifierSet::parse("")->contains(*Version::parse("1.0a1")));
  EXPECT_TRUE(SpecifierSet::parse(">=1,<2")->contains(*Version::parse("1.5")));
  EXPECT_FALSE(SpecifierSet::parse(">=1,<2")->contains(*Version::parse("2.0")));
}

TEST(Pep508, Markers) {
  MarkerEnv env = imageMarkerEnv("3.11.2", "amd64");
  struct Case {
    const char* m;
    const char* extra;
    Tri want;
  } cases[] = {
      {"python_version >= \"3.8\"", "", Tri::True},
      {"python_version < \"3\"", "", Tri::False},
      {"os_name == \"posix\" and python_version < \"3\"", "", Tri::False},
      {"os_name == \"nt\" or platform_machine == \"x86_64\"", "", Tri::True},
      {"extra == \"Test_Foo\"", "test-foo", Tri::True},
      {"extra == \"test\"", "", Tri::False},
      {"\"linux\" in sys_platform", "", Tri::True},
      {"\"win\" not in sys_platform", "", Tri::True},
      {"platform_release >= \"5\"", "", Tri::Unknown},
      {"platform_release >= \"5\" or python_version > \"3\"", "", Tri::True},
      {"platform_release >= \"5\" and python_version < \"3\"", "", Tri::False},
      {"(python_version == \"3.11\") and (implementation_name == \"cpython\")", "", Tri::True},
      {"python_full_version >= \"3.11.1\"", "", Tri::True},
      {"platform_python_implementation != \"PyPy\"", "", Tri::True},
      {"sys.platform == \"linux\"", "", Tri::True},
      {"python_version ~= \"3.10\"", "", Tri::True},
  };
  for (const auto& c : cases) {
    auto m = Marker::parse(c.m);
    ASSERT_TRUE(m.ok()) << c.m << ": " << m.error().message;
    EXPECT_EQ(m->evaluate(env, c.extra), c.want) << c.m;
  }
  for (const char* bad : {"python_version >= ", "foo == \"1\"", "\"a\" == \"b\"", "python_version >= \"3\" and",
                          "(python_version > \"3\"", "python_version not \"3\""})
    EXPECT_FALSE(Marker::parse(bad).ok()) << bad;
}

TEST(Pep508, Requirements) {
  auto r = Requirement::parse("Foo.Bar[security, tests] >=2.8.1, ==2.8.* ; python_version < \"4\"");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->key, "foo-bar");
  EXPECT_EQ(r->extras, (std::vector<std::string>{"security", "tests"}));
  EXPECT_EQ(r->specifier.specs().size(), 2u);
  ASSERT_TRUE(r->marker);
  auto u =
      Requirement::parse("pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee ; python_version > \"3\"");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->url, "https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee");
  ASSERT_TRUE(u->marker);
  auto p = Requirement::parse("name (>=1.0)");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->specifier.str(), ">=1.0");
  for (const char* bad : {"", "-bad", "name[", "name >= 1.0 ;", "name @ ", "na me"})
    EXPECT_FALSE(Requirement::parse(bad).ok()) << bad;
}

}  // namespace python_version_test
