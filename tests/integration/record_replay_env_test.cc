// The environment a replay rebuilds is the one the reference declares: `reference init --lock`
// records a pylock.toml and `dossier build` checks the wheels it carries against it; after
// installing, the replay reads the new venv (Kernodeck's own static reading) and a package the
// reference declares at another version, or a broken Requires-Dist, stops it at the
// environment step, naming the package, before the entry point runs; so does each verdict of
// `audit --lock --wheels` against the reference's lock (python.lock.*, the audit's own code),
// the venv's files compared with the locked wheels the dossier carries. `--image
// REF@sha256:...` replays the example project inside a podman image made in the test from
// Debian packages.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"
#include "support.h"

namespace integration_record_replay_env_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;
const std::string kWheel = "embeddings_example-1.0-py3-none-any.whl";


std::string findingMessages(const json& report, const std::string& code) {
  std::string out;
  for (const auto& f : report["findings"])
    if (f["code"] == code) out += f["message"].get<std::string>() + "\n";
  return out;
}

// The python.lock.* codes among a report's findings, one a line, sorted.
std::string lockCodes(const json& report) {
  std::vector<std::string> codes;
  for (const auto& f : report["findings"])
    if (f["code"].get<std::string>().starts_with("python.lock.")) codes.push_back(f["code"]);
  std::sort(codes.begin(), codes.end());
  std::string out;
  for (const auto& c : codes) out += c + "\n";
  return out;
}

// A pylock.toml locking embeddings_example VERSION as wheel FILE with hash SHA.
std::string lockText(const std::string& version, const std::string& file, const std::string& sha) {
  return "lock-version = \"1.0\"\ncreated-by = \"test\"\n\n[[packages]]\nname = \"embeddings-example\"\nversion = \"" +
         version + "\"\n\n[[packages.wheels]]\nname = \"" + file + "\"\npath = \"wheels/" + file +
         "\"\nhashes = { sha256 = \"" + sha + "\" }\n";
}

// The example project committed, run (its outputs kept as the expected ones), and built into
// a wheel at BASE/wheels; reference() records it with the options given.
struct Project {
  std::string base, proj, wheels;
  bool make(const char* name) {
    base = tempDir(name), proj = base + "/proj", wheels = base + "/wheels";
    const std::string git = "git -c user.email=t@example.org -c user.name=t ";
    RunResult r = run("cp -r " + std::string(SOURCE_DIR) + "/examples/embeddings " + proj + " && cd " + proj +
                      " && rm -rf out venv expected __pycache__ build *.egg-info wheels && git init -q && " + git +
                      "add -A && " + git + "commit -q -m embeddings && /usr/bin/python3 embed.py --inputs " +
                      "data/inputs.csv --weights weights.pt --out out && cp -r out expected && cp -r " + proj + " " +
                      base + "/src && cd " + base + "/src && PIP_CONFIG_FILE=/dev/null /usr/bin/python3 -m pip " +
                      "wheel -q --no-deps --no-build-isolation --no-index -w " + wheels + " .");
    if (r.code != 0) ADD_FAILURE() << r.err << r.out;
    return r.code == 0;
  }
  RunResult reference(const std::string& extra, const std::string& out = "reference.json") {
    return run("cd " + proj + " && " + K +
               " reference init --repo . --entry-point 'python embed.py --inputs data/inputs.csv --weights "
               "weights.pt --out out' --outputs out --data inputs=data/inputs.csv --weights encoder=weights.pt "
               "--requirements requirements.txt --python /usr/bin/python3 --expected expected --ids ids.txt "
               "--criterion 'abs<=1e-6' --why 'float32 on one CPU thread' --host-root /nonexistent " +
               extra + " -o " + out);
  }
};

bool canRunExample() { return run("/usr/bin/python3 -c 'import torch, numpy, setuptools, wheel'").code == 0; }

}  // namespace

TEST(RecordReplayEnv, ReferenceInitRecordsTheLockAndDossierBuildChecksTheWheelsAgainstIt) {
  if (!canRunExample()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch, numpy, setuptools and wheel";
  Project p;
  ASSERT_TRUE(p.make("replay-lock"));
  std::string sha = kernodeck::util::sha256Hex(readFile(p.wheels + "/" + kWheel));
  writeFile(p.proj + "/pylock.toml", lockText("1.0", kWheel, sha));
  RunResult init = p.reference("--lock pylock.toml");
  ASSERT_EQ(init.code, 0) << init.err;
  json ref = json::parse(readFile(p.proj + "/reference.json"));
  const json& lock = ref["packages"]["lock"];
  EXPECT_EQ(lock["path"], "pylock.toml") << lock.dump(1);
  EXPECT_EQ(lock["sha256"], kernodeck::util::sha256Hex(readFile(p.proj + "/pylock.toml")));
  ASSERT_EQ(lock["packages"].size(), 1u) << lock.dump(1);
  EXPECT_EQ(lock["packages"][0]["name"], "embeddings-example");
  EXPECT_EQ(lock["packages"][0]["version"], "1.0");
  EXPECT_EQ(lock["packages"][0]["wheels"][0]["sha256"], sha);
  EXPECT_NE(run(K + " reference show --reference " + p.proj + "/reference.json").out.find("lock"), std::string::npos);

  // The wheels the lock names: carried, no finding about them (no check report: incomplete, exit 3).
  RunResult good =
      run(K + " dossier build " + p.base + "/d1 --json --reference " + p.proj + "/reference.json --wheels " + p.wheels);
  json gj = json::parse(good.out, nullptr, false);
  ASSERT_TRUE(gj.is_object()) << good.err;
  EXPECT_EQ(good.code, 3) << good.err;
  EXPECT_EQ(countFindings(gj, "dossier.wheel.changed"), 0) << gj.dump(1);

  // A lock naming the wheel with another hash: an error naming the wheel.
  std::string other = sha;
  other[0] = other[0] == '0' ? '1' : '0';
  writeFile(p.proj + "/pylock-other.toml", lockText("1.0", kWheel, other));
  ASSERT_EQ(p.reference("--lock pylock-other.toml", "reference-other.json").code, 0);
  RunResult bad = run(K + " dossier build " + p.base + "/d2 --json --reference " + p.proj +
                      "/reference-other.json --wheels " + p.wheels);
  json bj = json::parse(bad.out, nullptr, false);
  ASSERT_TRUE(bj.is_object()) << bad.err;
  EXPECT_EQ(bad.code, 3) << bad.err;  // an error finding, under the incomplete verdict (no check report)
  ASSERT_EQ(countFindings(bj, "dossier.wheel.changed"), 1) << bj.dump(1);
  EXPECT_NE(findingMessages(bj, "dossier.wheel.changed").find("wheel " + kWheel + " has sha256"), std::string::npos)
      << bj.dump(1);

  // A malformed lock: one line naming the file, exit 2; a missing one: exit 3.
  writeFile(p.proj + "/broken.toml", "lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\n");
  RunResult malformed = p.reference("--lock broken.toml", "reference-broken.json");
  EXPECT_EQ(malformed.code, 2) << malformed.err;
  EXPECT_NE(malformed.err.find("broken.toml"), std::string::npos) << malformed.err;
  EXPECT_EQ(std::count(malformed.err.begin(), malformed.err.end(), '\n'), 1) << malformed.err;
  EXPECT_EQ(p.reference("--lock absent.toml", "reference-absent.json").code, 3);
}

TEST(RecordReplayEnv, ADeclaredVersionTheWheelsDoNotCarryStopsTheReplayAtEnvironment) {
  if (!canRunExample()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch, numpy, setuptools and wheel";
  Project p;
  ASSERT_TRUE(p.make("replay-inventory"));
  // The reference's lock says embeddings-example 2.0; the dossier carries the 1.0 wheel.
  writeFile(p.proj + "/pylock.toml", lockText("2.0", "embeddings_example-2.0-py3-none-any.whl", std::string(64, 'a')));
  ASSERT_EQ(p.reference("--lock pylock.toml").code, 0);
  std::string d = p.base + "/dossier";
  RunResult build =
      run(K + " dossier build " + d + " --json --reference " + p.proj + "/reference.json --wheels " + p.wheels);
  EXPECT_EQ(countFindings(json::parse(build.out, nullptr, false), "dossier.wheel.changed"), 1) << build.out;
  RunResult replay = run(K + " dossier replay --run --json --work " + p.base + "/fresh " + d);
  json rj = json::parse(replay.out, nullptr, false);
  ASSERT_TRUE(rj.is_object()) << replay.err;
  EXPECT_NE(replay.code, 0);
  EXPECT_EQ(stepStatus(rj, "environment"), "failed") << rj.dump(1);
  EXPECT_NE(stepError(rj, "environment").find("embeddings-example (version)"), std::string::npos) << rj.dump(1);
  EXPECT_NE(findingMessages(rj, "replay.inventory.differs").find("embeddings-example 1.0 is installed"),
            std::string::npos)
      << rj.dump(1);
  EXPECT_EQ(stepStatus(rj, "run"), "not_reached");
  EXPECT_FALSE(std::filesystem::exists(p.base + "/fresh/project/out"));
  // The reference's lock judged as `audit --lock` judges it: the one verdict, with its evidence.
  EXPECT_EQ(lockCodes(rj), "python.lock.version\n") << rj.dump(1);
  for (const auto& f : rj["findings"])
    if (f["code"] == "python.lock.version") {
      EXPECT_EQ(f.value("package", ""), "embeddings-example") << f.dump(1);
      EXPECT_EQ(f.value("installed", ""), "1.0") << f.dump(1);
      EXPECT_EQ(f.value("path", ""), "pylock.toml") << f.dump(1);
      EXPECT_EQ(f.value("evidence", ""), "lock") << f.dump(1);
    }
  EXPECT_NE(stepError(rj, "environment").find("embeddings-example (lock.version)"), std::string::npos) << rj.dump(1);

  // Not only the lock: a recorded environment (--packages-from) whose numpy the rebuild does not have.
  writeFile(p.proj + "/inventory.json",
            R"({"python": {"environments": [{"prefix": "usr", "freeze": ["numpy==9.9"]}]}})");
  ASSERT_EQ(p.reference("--packages-from inventory.json", "reference-env.json").code, 0);
  std::string d2 = p.base + "/dossier-env";
  ASSERT_EQ(run(K + " dossier build " + d2 + " --reference " + p.proj + "/reference-env.json").code, 3);
  RunResult env = run(K + " dossier replay --run --json --work " + p.base + "/fresh-env " + d2);
  json ej = json::parse(env.out, nullptr, false);
  ASSERT_TRUE(ej.is_object()) << env.err;
  EXPECT_EQ(stepStatus(ej, "environment"), "failed") << ej.dump(1);
  EXPECT_NE(stepError(ej, "environment").find("numpy (version)"), std::string::npos) << ej.dump(1);
  EXPECT_NE(findingMessages(ej, "replay.inventory.differs").find("but environment usr declares numpy==9.9"),
            std::string::npos)
      << ej.dump(1);
  EXPECT_EQ(stepStatus(ej, "run"), "not_reached");
}

TEST(RecordReplayEnv, TheRebuiltVenvGetsTheAuditsLockVerdictsAgainstTheReferencesLock) {
  if (!canRunExample()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch, numpy, setuptools and wheel";
  Project p;
  ASSERT_TRUE(p.make("replay-lock-verdicts"));
  std::string sha = kernodeck::util::sha256Hex(readFile(p.wheels + "/" + kWheel));
  // Clean: the venv holds the locked wheel's files, nothing else: no python.lock finding.
  writeFile(p.proj + "/pylock.toml", lockText("1.0", kWheel, sha));
  ASSERT_EQ(p.reference("--lock pylock.toml").code, 0);
  std::string d = p.base + "/dossier";
  ASSERT_EQ(run(K + " dossier build " + d + " --reference " + p.proj + "/reference.json --wheels " + p.wheels).code, 3);
  RunResult ok = run(K + " dossier replay --run --json --work " + p.base + "/fresh " + d);
  json oj = json::parse(ok.out, nullptr, false);
  ASSERT_TRUE(oj.is_object()) << ok.err;
  EXPECT_EQ(ok.code, 0) << ok.err << oj.dump(1);
  EXPECT_EQ(lockCodes(oj), "") << oj.dump(1);
  ASSERT_EQ(oj["environment"]["locks"].size(), 1u) << oj["environment"].dump(1);
  EXPECT_EQ(oj["environment"]["locks"][0]["file"], "pylock.toml");
  EXPECT_EQ(oj["environment"]["locks"][0]["packages"], 1);

  // A second locked wheel carrying the example's embed.py: whichever pip installs last, one
  // package's embed.py is not its locked wheel's, and the replay stops before the entry point.
  std::string w2 = p.base + "/wheels2";
  ASSERT_EQ(run("mkdir " + w2 + " && cp " + p.wheels + "/" + kWheel + " " + w2).code, 0);
  writeFile(p.base + "/mkclobber.py",
            "import sys, zipfile\n"
            "files = {'embed.py': 'print(\"not the example\")\\n',\n"
            "         'zclobber-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: zclobber\\nVersion: 1.0\\n',\n"
            "         'zclobber-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: "
            "true\\nTag: py3-none-any\\n'}\n"
            "with zipfile.ZipFile(sys.argv[1] + '/zclobber-1.0-py3-none-any.whl', 'w') as z:\n"
            "  for n, t in files.items(): z.writestr(n, t)\n"
            "  z.writestr('zclobber-1.0.dist-info/RECORD', ''.join(n + ',,\\n' for n in files) + "
            "'zclobber-1.0.dist-info/RECORD,,\\n')\n");
  ASSERT_EQ(run("python3 " + p.base + "/mkclobber.py " + w2).code, 0);
  const std::string clobber = "zclobber-1.0-py3-none-any.whl";
  std::string lock2 = lockText("1.0", kWheel, sha) + "\n[[packages]]\nname = \"zclobber\"\nversion = \"1.0\"\n\n" +
                      "[[packages.wheels]]\nname = \"" + clobber + "\"\npath = \"wheels/" + clobber +
                      "\"\nhashes = { sha256 = \"" + kernodeck::util::sha256Hex(readFile(w2 + "/" + clobber)) +
                      "\" }\n";
  writeFile(p.proj + "/pylock-clobber.toml", lock2);
  ASSERT_EQ(p.reference("--lock pylock-clobber.toml", "reference-clobber.json").code, 0);
  std::string d2 = p.base + "/dossier-clobber";
  ASSERT_EQ(run(K + " dossier build " + d2 + " --reference " + p.proj + "/reference-clobber.json --wheels " + w2).code,
            3);
  RunResult bad = run(K + " dossier replay --run --json --work " + p.base + "/fresh-clobber " + d2);
  json bj = json::parse(bad.out, nullptr, false);
  ASSERT_TRUE(bj.is_object()) << bad.err;
  EXPECT_NE(bad.code, 0);
  EXPECT_EQ(lockCodes(bj), "python.lock.file\n") << bj.dump(1);
  for (const auto& f : bj["findings"]) {
    if (f["code"] != "python.lock.file") continue;
    EXPECT_TRUE(f.value("path", "").ends_with("/site-packages/embed.py")) << f.dump(1);
    EXPECT_EQ(f.value("change", ""), "changed") << f.dump(1);
    EXPECT_EQ(f.value("evidence", ""), "wheel") << f.dump(1);
    EXPECT_TRUE(f.value("wheel", "") == kWheel || f.value("wheel", "") == clobber) << f.dump(1);
  }
  EXPECT_EQ(stepStatus(bj, "environment"), "failed") << bj.dump(1);
  EXPECT_NE(stepError(bj, "environment").find("(lock.file)"), std::string::npos) << bj.dump(1);
  EXPECT_EQ(stepStatus(bj, "run"), "not_reached");
}

TEST(RecordReplayEnv, ABrokenDependencyContractStopsTheReplayAndTheExamplePasses) {
  if (!canRunExample()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch, numpy, setuptools and wheel";
  Project p;
  ASSERT_TRUE(p.make("replay-contract"));
  ASSERT_EQ(p.reference("").code, 0);
  // The example from its wheel: the inventory matches, the contract holds, the outputs match.
  std::string d = p.base + "/dossier";
  ASSERT_EQ(run(K + " dossier build " + d + " --reference " + p.proj + "/reference.json --wheels " + p.wheels).code, 3);
  RunResult ok = run(K + " dossier replay --run --json --work " + p.base + "/fresh " + d);
  json oj = json::parse(ok.out, nullptr, false);
  ASSERT_TRUE(oj.is_object()) << ok.err;
  EXPECT_EQ(ok.code, 0) << ok.err << oj.dump(1);
  EXPECT_EQ(countFindings(oj, "replay.inventory.matches"), 1) << oj.dump(1);
  EXPECT_EQ(countFindings(oj, "replay.matches"), 1) << oj.dump(1);
  bool listed = false;
  for (const auto& i : oj["environment"]["installed"])
    listed |= i["name"] == "embeddings_example" || i["name"] == "embeddings-example";
  EXPECT_TRUE(listed) << oj["environment"].dump(1);

  // Beside it, a wheel whose Requires-Dist names a package nothing provides (pip installs it with --no-deps).
  writeFile(p.base + "/mkneedy.py",
            "import sys, zipfile\n"
            "meta = 'Metadata-Version: 2.1\\nName: needy\\nVersion: 1.0\\nRequires-Dist: absentdep>=1\\n'\n"
            "files = {'needy.py': '', 'needy-1.0.dist-info/METADATA': meta,\n"
            "         'needy-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: "
            "true\\nTag: py3-none-any\\n'}\n"
            "with zipfile.ZipFile(sys.argv[1] + '/needy-1.0-py3-none-any.whl', 'w') as z:\n"
            "  for n, t in files.items(): z.writestr(n, t)\n"
            "  z.writestr('needy-1.0.dist-info/RECORD', ''.join(n + ',,\\n' for n in files) + "
            "'needy-1.0.dist-info/RECORD,,\\n')\n");
  ASSERT_EQ(run("python3 " + p.base + "/mkneedy.py " + p.wheels).code, 0);
  std::string d2 = p.base + "/dossier2";
  ASSERT_EQ(run(K + " dossier build " + d2 + " --reference " + p.proj + "/reference.json --wheels " + p.wheels).code,
            3);
  RunResult broken = run(K + " dossier replay --run --json --work " + p.base + "/fresh2 " + d2);
  json bj = json::parse(broken.out, nullptr, false);
  ASSERT_TRUE(bj.is_object()) << broken.err;
  EXPECT_NE(broken.code, 0);
  EXPECT_EQ(stepStatus(bj, "environment"), "failed") << bj.dump(1);
  EXPECT_NE(findingMessages(bj, "replay.contract.broken").find("needy 1.0 requires absentdep>=1"), std::string::npos)
      << bj.dump(1);
  EXPECT_EQ(stepStatus(bj, "run"), "not_reached");
}

}  // namespace integration_record_replay_env_test
