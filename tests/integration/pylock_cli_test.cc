// `reference init --lock` through the binary with a valid PEP 751 lock whose [tool.uv] table holds
// what the old TOML subset reader refused (floats, multi-line strings): the lock is recorded.
// The old binary printed "kernodeck reference init: pylock.toml is not a lock Kernodeck reads
// (pylock.toml): line 11: '1.5' is not a value read here" and exited 2.
#include <gtest/gtest.h>

#include "kernodeck/util/hash.h"
#include "support.h"

namespace integration_pylock_cli_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;
const std::string kSha = "e2e9b3b2f7a25b9b7e6d1f2c3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b";

}  // namespace

TEST(PylockCli, AValidLockWithAToolTableOfFloatsAndMultiLineStringsIsRecorded) {
  std::string dir = tempDir("pylock-cli");
  std::string lock =
      "lock-version = \"1.0\"\n"
      "created-by = \"uv\"\n"
      "requires-python = \">=3.11\"\n"
      "\n"
      "[[packages]]\n"
      "name = \"six\"\n"
      "version = \"1.16.0\"\n"
      "wheels = [{ name = \"six-1.16.0-py2.py3-none-any.whl\", upload-time = 2021-05-05T14:18:17Z, "
      "size = 11053, hashes = { sha256 = \"" +
      kSha +
      "\" } }]\n"
      "\n"
      "[tool.uv]\n"
      "resolution-ratio = 1.5\n"
      "exclude-newer = 2024-06-01T00:00:00Z\n"
      "note = \"\"\"\n"
      "locked for the replay,\n"
      "on two lines\"\"\"\n"
      "raw = '''\n"
      "C:\\lock\n"
      "'''\n";
  writeFile(dir + "/pylock.toml", lock);
  RunResult r =
      run("cd " + dir + " && " + K + " reference init --lock pylock.toml --host-root /nonexistent -o reference.json");
  ASSERT_EQ(r.code, 0) << r.err;
  json ref = json::parse(readFile(dir + "/reference.json"));
  const json& l = ref["packages"]["lock"];
  EXPECT_EQ(l["path"], "pylock.toml") << l.dump(1);
  EXPECT_EQ(l["sha256"], kernodeck::util::sha256Hex(lock));
  ASSERT_EQ(l["packages"].size(), 1u) << l.dump(1);
  EXPECT_EQ(l["packages"][0]["name"], "six");
  EXPECT_EQ(l["packages"][0]["version"], "1.16.0");
  EXPECT_EQ(l["packages"][0]["wheels"][0]["sha256"], kSha);

  // What is not TOML (a key defined twice) is still refused: one line naming the file and the
  // line, exit 2.
  writeFile(dir + "/twice.toml", "lock-version = \"1.0\"\nlock-version = \"1.0\"\n");
  RunResult bad =
      run("cd " + dir + " && " + K + " reference init --lock twice.toml --host-root /nonexistent -o twice.json");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("twice.toml"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("line 2"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

}  // namespace integration_pylock_cli_test
