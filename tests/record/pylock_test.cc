// pylock.toml: the strict TOML subset reader, the lock read from it, written back, and turned
// into the --hash requirements Debian's pip installs.
#include "kernodeck/record/pylock.h"

#include <gtest/gtest.h>

using namespace kernodeck::record;

namespace {

const std::string kHash(64, 'a');

TEST(Pylock, ReadsTheSubsetALockUses) {
  auto doc = parseTomlSubset(
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

TEST(Pylock, RefusesWhatItDoesNotReadNamingTheLine) {
  struct Case {
    std::string text, says;
  } cases[] = {
      {"a = 1\na = 2\n", "line 2: 'a' is defined twice"},
      {"a = \"\"\"x\n\"\"\"\n", "line 1: multi-line strings"},
      {"a = 1.5\n", "line 1: '1.5' is not a value"},
      {"a = \"x\n", "line 1: a string does not end"},
      {"a = [1, 2\n", "',' or ']' expected"},
      {"[a\n", "line 1: a table header does not end"},
      {"a = 1 b = 2\n", "after a value"},
      {"= 1\n", "a key was expected"},
      {"a = \"\\q\"\n", "an unknown escape"},
      {"a = {b = 1\n", "',' or '}' expected"},
      {"a = 1\n[a]\n", "'a' is not a table"},
  };
  for (const auto& c : cases) {
    auto r = parseTomlSubset(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << c.text << " -> " << r.error().message;
  }
}

TEST(Pylock, LockRoundTripsAndBecomesHashedRequirements) {
  Lock lock;
  lock.lockVersion = "1.0";
  lock.packages.push_back(
      {"embeddings_example",
       "1.0",
       {{"embeddings_example-1.0-py3-none-any.whl", "wheels/embeddings_example-1.0-py3-none-any.whl", kHash}},
       false});
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

}  // namespace
