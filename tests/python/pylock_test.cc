// pylock.toml: TOML read with toml++ as JSON, the lock read from it, written back, and turned
// into the --hash requirements Debian's pip installs.
#include "kernodeck/python/lock_check.h"
#include "kernodeck/python/pylock.h"

#include <gtest/gtest.h>

namespace python_pylock_test {

using namespace kernodeck::python;

namespace {

const std::string kHash(64, 'a');

TEST(Pylock, ReadsTheTomlALockUses) {
  auto doc = parseToml(
      "# a lock\nlock-version = \"1.0\"\ncreated-by = 'uv'\nrequires-python = \">=3.11\"\n"
      "environments = [\n  \"sys_platform == 'linux'\", # linux only\n  \"x\",\n]\n"
      "[[packages]]\nname = \"numpy\"\nversion = \"1.24.2\"\n"
      "[[packages.wheels]]\nname = \"numpy-1.24.2-cp311-cp311-linux_x86_64.whl\"\nupload-time = 2024-01-02T03:04:05Z\n"
      "size = 17_000\nhashes = { sha256 = \"" +
      kHash +
      "\" }\n[packages.tool.x]\nflag = true\n"
      "[[packages]]\nname = \"six\"\nversion = \"1.16.0\"\n"
      "wheels = [{ path = \"wheels/six-1.16.0-py2.py3-none-any.whl\", hashes.sha256 = \"" +
      kHash + "\" }]\n\"quoted key\".\"a b\" = \"\\u00e9\\n\"\n");
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ((*doc)["environments"].size(), 2u);
  EXPECT_EQ((*doc)["packages"][0]["wheels"][0]["size"], 17000);
  EXPECT_EQ((*doc)["packages"][0]["wheels"][0]["upload-time"], "2024-01-02T03:04:05Z");
  EXPECT_EQ((*doc)["packages"][0]["tool"]["x"]["flag"], true);
  EXPECT_EQ((*doc)["packages"][1]["wheels"][0]["hashes"]["sha256"], kHash);
  EXPECT_EQ((*doc)["packages"][1]["quoted key"]["a b"], "\xc3\xa9\n");  // in the last table opened
}

TEST(Pylock, RefusesWhatIsNotTomlNamingTheLine) {
  struct Case {
    std::string text, says;
  } cases[] = {
      {"a = 1\na = 2\n", "line 2: "}, {"a = \"x\n", "line 1: "},
      {"a = [1, 2\n", "array"},       {"[a\n", "line 1: "},
      {"a = 1 b = 2\n", "line 1: "},  {"= 1\n", "line 1: "},
      {"a = \"\\q\"\n", "escape"},    {"a = {b = 1\n", "inline table"},
      {"a = 1\n[a]\n", "line 2: "},   {"\n\na = 1e400\n", "line 3: "},
      {"a = '\xff'\n", "utf-8"},
  };
  for (const auto& c : cases) {
    auto r = parseToml(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << c.text << " -> " << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
  }
}

// What the old subset reader refused ("'1.5' is not a value read here", "multi-line strings are
// not read"): a valid lock whose [tool.uv] tables hold floats, multi-line strings and dates.
TEST(Pylock, ReadsAValidLockWhateverItsToolTablesHold) {
  std::string text =
      "lock-version = \"1.0\"\ncreated-by = \"uv\"\n"
      "[[packages]]\nname = \"six\"\nversion = \"1.16.0\"\n"
      "[[packages.wheels]]\nname = \"six-1.16.0-py2.py3-none-any.whl\"\nsize = 11_053\n"
      "upload-time = 2021-05-05T14:18:17.5+02:00\nhashes = { sha256 = \"" +
      kHash +
      "\" }\n"
      "[packages.tool.uv]\nweight = -0.25\n"
      "[tool.uv]\nratio = 1.5\nhuge = 6.02e23\nnot-a-number = nan\nsince = 1979-05-27\nat = 07:32:00\n"
      "note = \"\"\"\ntwo\\\n   lines\"\"\"\nraw = '''\nC:\\x\n'''\n";
  auto doc = parseToml(text);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ((*doc)["tool"]["uv"]["ratio"], 1.5);
  EXPECT_EQ((*doc)["tool"]["uv"]["huge"], 6.02e23);
  EXPECT_EQ((*doc)["tool"]["uv"]["note"], "twolines");
  EXPECT_EQ((*doc)["tool"]["uv"]["raw"], "C:\\x\n");
  EXPECT_EQ((*doc)["tool"]["uv"]["since"], "1979-05-27");
  EXPECT_EQ((*doc)["tool"]["uv"]["at"], "07:32:00");
  EXPECT_EQ((*doc)["packages"][0]["wheels"][0]["upload-time"], "2021-05-05T14:18:17.5+02:00");
  EXPECT_EQ((*doc)["packages"][0]["tool"]["uv"]["weight"], -0.25);
  auto lock = parsePylock(text);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  ASSERT_EQ(lock->packages.size(), 1u);
  EXPECT_EQ(lock->packages[0].name, "six");
  EXPECT_EQ(lock->packages[0].wheels[0].sha256, kHash);
}

TEST(Pylock, LockRoundTripsAndBecomesHashedRequirements) {
  Lock lock;
  lock.lockVersion = "1.0";
  LockedPackage p;
  p.name = "embeddings_example", p.version = "1.0";
  p.wheels = {{"embeddings_example-1.0-py3-none-any.whl", "wheels/embeddings_example-1.0-py3-none-any.whl", kHash}};
  lock.packages.push_back(p);
  auto back = parsePylock(writePylock(lock));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->packages.size(), 1u);
  EXPECT_EQ(back->packages[0].wheels[0].path, "wheels/embeddings_example-1.0-py3-none-any.whl");
  EXPECT_EQ(back->packages[0].wheels[0].sha256, kHash);
  EXPECT_EQ(lockRequirements(*back),
            "# from pylock.toml: every distribution pinned by its sha256\nembeddings_example==1.0 \\\n"
            "    --hash=sha256:" +
                kHash + "\n");
  // A lock needs a version and a sha256 for every wheel.
  EXPECT_FALSE(parsePylock("lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\n").ok());
  EXPECT_FALSE(parsePylock("lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = \"1\"\n"
                           "[[packages.wheels]]\nname = \"x-1-py3-none-any.whl\"\n")
                   .ok());
  EXPECT_FALSE(parsePylock("lock-version = \"2.0\"\n").ok());
  std::string n, v;
  EXPECT_TRUE(wheelNameVersion("numpy-1.24.2-cp311-cp311-manylinux_2_17_x86_64.whl", n, v));
  EXPECT_EQ(n + " " + v, "numpy 1.24.2");
  EXPECT_FALSE(wheelNameVersion("numpy-1.24.2.tar.gz", n, v));
}

// PEP 751's selection, as `audit --lock` evaluates it: requires-python and environments decide
// whether the lock applies at all; each package's marker, with the extras and dependency groups
// chosen (default-groups unless --lock-group names others), whether it is installed.
TEST(Pylock, SelectionFollowsEnvironmentsMarkersExtrasAndGroups) {
  std::string wheel = "wheels = [{ name = \"x-1-py3-none-any.whl\", hashes = { sha256 = \"" + std::string(64, 'a') +
                      "\" } }]\n";
  auto pkg = [&](const std::string& name, const std::string& marker) {
    return "\n[[packages]]\nname = \"" + name + "\"\nversion = \"1\"\n" +
           (marker.empty() ? "" : "marker = \"" + marker + "\"\n") + wheel;
  };
  std::string head =
      "lock-version = \"1.0\"\nrequires-python = \">=3.9\"\nenvironments = [\"sys_platform == 'linux'\"]\n"
      "extras = [\"GPU\"]\ndependency-groups = [\"dev\", \"docs\"]\ndefault-groups = [\"dev\"]\n";
  auto lock = parsePylock(head + pkg("always", "") + pkg("gpu", "'gpu' in extras") +
                          pkg("dev", "'dev' in dependency_groups") + pkg("docs", "'docs' in dependency_groups") +
                          pkg("arm", "platform_machine == 'aarch64'") + pkg("notdev", "'dev' not in dependency_groups"));
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_EQ(lock->extras, std::vector<std::string>{"gpu"});  // PEP 503 normalised
  auto names = [](const LockSelection& s) {
    std::string out;
    for (const auto* p : s.packages) out += (out.empty() ? "" : " ") + p->name;
    return out;
  };
  LockTarget t;
  t.markers = imageMarkerEnv("3.11.2", "amd64");
  EXPECT_EQ(names(selectLocked(*lock, t)), "always dev");
  t.groups = {"gpu", "docs"};
  EXPECT_EQ(names(selectLocked(*lock, t)), "always gpu docs notdev");
  t.groups = {};
  t.markers = imageMarkerEnv("3.11.2", "arm64");
  EXPECT_EQ(names(selectLocked(*lock, t)), "always dev arm");
  EXPECT_EQ(unknownLockGroups(*lock, {"gpu", "Dev", "nope"}), std::vector<std::string>{"nope"});
  // The image's Python or platform outside the lock: it does not apply, and says why.
  t.markers = imageMarkerEnv("3.8.10", "amd64");
  auto old = selectLocked(*lock, t);
  EXPECT_FALSE(old.applies);
  EXPECT_NE(old.why.find("requires-python >=3.9"), std::string::npos) << old.why;
  t.markers = imageMarkerEnv("3.11.2", "amd64");
  t.markers["sys_platform"] = "win32";
  auto win = selectLocked(*lock, t);
  EXPECT_FALSE(win.applies);
  EXPECT_TRUE(win.packages.empty());
  // A marker the image cannot decide selects its package, named as undecided.
  auto undecided = parsePylock("lock-version = \"1.0\"\n" + pkg("rel", "platform_release >= '5'"));
  ASSERT_TRUE(undecided.ok());
  auto u = selectLocked(*undecided, LockTarget{imageMarkerEnv("3.11.2", "amd64"), {}});
  EXPECT_EQ(names(u), "rel");
  EXPECT_EQ(u.undecided.size(), 1u);
}

TEST(Pylock, MalformedFieldsAreNamed) {
  struct Case {
    std::string text, says;
  } cases[] = {
      {"lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = \"1\"\nwheels = [{ name = "
       "\"x-1-py3-none-any.whl\", hashes = { sha256 = \"abcd\" } }]\n",
       "64 lower-case hex digits (it has 4"},
      {"lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = \"1\"\nwheels = [{ name = "
       "\"x-1-py3-none-any.whl\", hashes = { sha256 = \"" +
           std::string(64, 'a') + "\", sha512 = \"" + std::string(64, 'b') + "\" } }]\n",
       "hashes.sha512 is not 128"},
      {"lock-version = \"1.0\"\nrequires-python = \">=three\"\n", "requires-python"},
      {"lock-version = \"1.0\"\nenvironments = \"linux\"\n", "environments is not an array"},
      {"lock-version = \"1.0\"\nenvironments = [\"os_name ==\"]\n", "environments[0]"},
      {"lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = 1\n", "version is not a string"},
  };
  for (const auto& c : cases) {
    auto l = parsePylock(c.text);
    ASSERT_FALSE(l.ok()) << c.text;
    EXPECT_TRUE(l.error().is(kernodeck::ErrorKind::Corrupt));
    EXPECT_NE(l.error().message.find(c.says), std::string::npos) << l.error().message;
  }
}

// pip's hash-checking mode as a lock: pins, markers and sha256 hashes; a line that is not a pin
// is refused, naming it.
TEST(Pylock, ARequirementsFileIsALockWhenEveryLineIsPinned) {
  std::string h = std::string(64, 'c');
  std::string text = "six==1.16.0 --hash=sha256:" + h + " --hash=sha256:" + std::string(64, 'd') +
                     "\nnumpy==2.0 ; sys_platform == 'win32'\n";
  auto read = [&](const std::string& p) { return p == "r.txt" ? std::optional<std::string>(text) : std::nullopt; };
  auto lock = lockFromRequirements(loadRequirements("r.txt", read));
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  ASSERT_EQ(lock->packages.size(), 2u);
  EXPECT_EQ(lock->packages[0].version, "1.16.0");
  EXPECT_EQ(lock->packages[0].wheels.size(), 2u);
  EXPECT_EQ(lock->packages[0].wheels[0].sha256, h);
  EXPECT_TRUE(lock->packages[0].anyOfHashes);
  auto sel = selectLocked(*lock, LockTarget{imageMarkerEnv("3.11.2", "amd64"), {}});
  ASSERT_EQ(sel.packages.size(), 1u);
  EXPECT_EQ(sel.packages[0]->name, "six");
  std::string loose = "six>=1\n";
  auto r2 = [&](const std::string& p) { return p == "r.txt" ? std::optional<std::string>(loose) : std::nullopt; };
  auto bad = lockFromRequirements(loadRequirements("r.txt", r2));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("r.txt line 1"), std::string::npos) << bad.error().message;
}

}  // namespace

}  // namespace python_pylock_test
