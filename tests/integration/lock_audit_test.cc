// `audit --lock` with real wheels, offline: Debian's wheels of pip, setuptools and wheel, and
// test packages built with `pip wheel --no-index --no-build-isolation` (lockext with a compiled
// extension module), locked by hash in a pylock.toml, installed into a venv inside a root
// filesystem with `pip install --no-index --find-links` (tests/fixtures/lock-wheels/make, built
// once for this program). The clean image gives no python.lock.* finding; each image below
// changes one thing and gives exactly the finding named. The file changed with its RECORD line
// rewritten to match is caught with --wheels and not without: the image's RECORD cannot see it.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kernodeck/util/hash.h"
#include "support.h"

namespace integration_lock_audit_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string kSite = "/opt/venv/lib/python3.11/site-packages";

struct Fixture {
  std::string dir, wheels, clean, error;
  std::map<std::string, std::string> sha;  // wheel file name -> sha256
};

bool haveFixtureTools() {
  for (const char* f : {"/usr/share/python-wheels", "/usr/include/python3.11/Python.h"})
    if (!exists(f)) return false;
  return run("/usr/bin/python3 -c 'import ensurepip, setuptools, wheel'").code == 0 && haveTool("gcc");
}

const Fixture& fixture() {
  static Fixture f = [] {
    Fixture x;
    x.dir = tempDir("lock-audit");
    // Made once per build folder for every test here (each runs in a process of its own under
    // ctest), again when the script changes; the tests copy what they change.
    std::string make = std::string(SOURCE_DIR) + "/tests/fixtures/lock-wheels/make";
    std::string bin = KERNODECK_BIN, fx = bin.substr(0, bin.rfind('/')) + "/lock-wheels-fixture";
    RunResult r = run("set -e; exec 9>" + fx + ".lock; flock 9; key=$(sha256sum " + make + " /usr/bin/python3 | sha256sum); "
                      "if [ \"$(cat " + fx + "/.key 2>/dev/null)\" != \"$key\" ]; then rm -rf " + fx + "; " + make + " " + fx +
                      "; echo \"$key\" > " + fx + "/.key; fi");
    if (r.code != 0) x.error = r.err + r.out;
    x.wheels = fx + "/wheels", x.clean = fx + "/clean";
    RunResult ls = run("ls " + x.wheels);
    size_t at = 0;
    while (at < ls.out.size()) {
      size_t nl = ls.out.find('\n', at);
      std::string name = ls.out.substr(at, nl - at);
      if (!name.empty()) x.sha[name] = kernodeck::util::sha256Hex(readFile(x.wheels + "/" + name));
      at = nl == std::string::npos ? ls.out.size() : nl + 1;
    }
    return x;
  }();
  return f;
}

std::string wheelOf(const Fixture& f, const std::string& prefix) {
  for (const auto& [name, sha] : f.sha)
    if (name.rfind(prefix, 0) == 0) return name;
  return "";
}

// A package entry of a pylock.toml: the named wheel with its hash.
std::string package(const Fixture& f, const std::string& name, const std::string& version, const std::string& wheel,
                    const std::string& marker = "") {
  return "\n[[packages]]\nname = \"" + name + "\"\nversion = \"" + version + "\"\n" +
         (marker.empty() ? "" : "marker = \"" + marker + "\"\n") +
         "index = \"https://pypi.org/simple\"\nwheels = [{ name = \"" + wheel + "\", url = \"https://files.example/" +
         wheel + "\", hashes = { sha256 = \"" + f.sha.at(wheel) + "\" } }]\n";
}

// The lock of the clean image: pip, setuptools, lockpure 1.0, lockext 1.0; wheel only in the
// "build" dependency group, which the defaults do not select.
std::string lockText(const Fixture& f, const std::string& environments = "[\"sys_platform == 'linux'\"]") {
  return "lock-version = \"1.0\"\ncreated-by = \"test\"\nrequires-python = \">=3.8\"\nenvironments = " +
         environments + "\ndependency-groups = [\"build\"]\ndefault-groups = []\n" +
         package(f, "pip", "23.0.1", wheelOf(f, "pip-")) + package(f, "setuptools", "66.1.1", wheelOf(f, "setuptools-")) +
         package(f, "wheel", "0.38.4", wheelOf(f, "wheel-"), "'build' in dependency_groups") +
         package(f, "lockpure", "1.0", "lockpure-1.0-py3-none-any.whl") +
         package(f, "lockext", "1.0", wheelOf(f, "lockext-1.0-"));
}

// A copy of the clean image, changed by the shell commands `change` ($R: its root, $S: its
// site-packages).
std::string image(const std::string& name, const std::string& change = "") {
  const Fixture& f = fixture();
  std::string root = f.dir + "/" + name;
  RunResult r = run("rm -rf " + root + " && cp -a " + f.clean + " " + root + " && R=" + root + " && S=" + root + kSite + " && " +
                    (change.empty() ? "true" : change));
  EXPECT_EQ(r.code, 0) << r.err;
  return root;
}

// The python.lock.* findings of an audit, as "CODE SUBJECT" (the path for python.lock.file,
// else the package, else nothing), sorted.
std::multiset<std::string> lockFindings(const json& report) {
  std::multiset<std::string> out;
  for (const auto& fd : report.value("findings", json::array())) {
    std::string code = fd.value("code", "");
    if (code.rfind("python.lock.", 0) != 0) continue;
    std::string subject = code == "python.lock.file" ? fd.value("path", "") : fd.value("package", "");
    out.insert(subject.empty() ? code : code + " " + subject);
  }
  return out;
}

json audit(const std::string& root, const std::string& lock, const std::string& more = "", int* code = nullptr) {
  return auditJson("rootfs:" + root + " --lock " + lock + " --fail-on none " + more, code);
}

const json* packageOf(const json& report, const std::string& name) {
  for (const auto& e : report.at("python").at("environments"))
    for (const auto& p : e["packages"])
      if (p["name"] == name) return &p;
  return nullptr;
}

#define NEEDS_FIXTURE()                                                                                \
  if (!haveFixtureTools()) GTEST_SKIP() << "needs python3-venv, python3-dev, gcc and the -whl packages"; \
  const Fixture& f = fixture();                                                                        \
  ASSERT_TRUE(f.error.empty()) << f.error

}  // namespace

TEST(LockAudit, TheCleanImageMatchesItsLockAndItsWheels) {
  NEEDS_FIXTURE();
  std::string lock = f.dir + "/pylock.toml";
  writeFile(lock, lockText(f));
  std::string root = image("clean");
  int code = -1;
  json plain = audit(root, lock, "", &code);
  ASSERT_TRUE(plain.is_object()) << code;
  EXPECT_EQ(lockFindings(plain), std::multiset<std::string>{}) << plain["findings"].dump(1);
  json r = audit(root, lock, "--wheels " + f.wheels);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(lockFindings(r), std::multiset<std::string>{}) << r["findings"].dump(1);
  // The inventory gives the lock's source and the evidence the files were judged by.
  const json* ext = packageOf(r, "lockext");
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ((*ext)["lock"]["files_evidence"], "wheel") << ext->dump(1);
  EXPECT_EQ((*ext)["lock"]["wheel"], wheelOf(f, "lockext-1.0-"));
  EXPECT_EQ((*ext)["lock"]["index"], "https://pypi.org/simple");
  EXPECT_GE((*ext)["lock"]["files_checked"].get<int>(), 3);  // the .so, __init__.py, METADATA, ...
  const json* pip = packageOf(r, "pip");
  ASSERT_NE(pip, nullptr);
  EXPECT_EQ((*pip)["lock"]["files_evidence"], "wheel");
  EXPECT_GT((*pip)["lock"]["files_checked"].get<int>(), 400);
  const json* plainPure = packageOf(plain, "lockpure");
  ASSERT_NE(plainPure, nullptr);
  EXPECT_EQ((*plainPure)["lock"]["files_evidence"], "image RECORD");
  // --lock-group build selects the wheel package, which the image lacks.
  json build = audit(root, lock, "--lock-group build");
  EXPECT_EQ(lockFindings(build), std::multiset<std::string>{"python.lock.missing wheel"});
}

TEST(LockAudit, AFileChangedWithItsRecordRewrittenIsCaughtOnlyAgainstTheWheel) {
  NEEDS_FIXTURE();
  std::string lock = f.dir + "/pylock.toml";
  writeFile(lock, lockText(f));
  // The attacker changes lockpure/__init__.py and writes its new hash and size into RECORD.
  std::string root = image("rewritten",
                           "echo 'VALUE = \"evil\"' > $S/lockpure/__init__.py && "
                           "H=$(/usr/bin/python3 -c \"import hashlib,base64,sys; d=open(sys.argv[1],'rb').read(); "
                           "print('sha256='+base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()"
                           "+','+str(len(d)))\" $S/lockpure/__init__.py) && "
                           "sed -i \"s|^lockpure/__init__.py,.*|lockpure/__init__.py,$H|\" "
                           "$S/lockpure-1.0.dist-info/RECORD");
  json plain = audit(root, lock);
  ASSERT_TRUE(plain.is_object());
  EXPECT_EQ(lockFindings(plain), std::multiset<std::string>{});
  EXPECT_EQ(countFindings(plain, "python.record.modified"), 0) << "the RECORD line was not rewritten";
  json r = audit(root, lock, "--wheels " + f.wheels);
  EXPECT_EQ(lockFindings(r), std::multiset<std::string>{"python.lock.file " + kSite + "/lockpure/__init__.py"})
      << r["findings"].dump(1);
  for (const auto& fd : r["findings"])
    if (fd["code"] == "python.lock.file") {
      EXPECT_EQ(fd["evidence"], "wheel");
      EXPECT_EQ(fd["change"], "changed");
    }
}

TEST(LockAudit, EachChangeGivesExactlyItsFinding) {
  NEEDS_FIXTURE();
  std::string lock = f.dir + "/pylock.toml";
  writeFile(lock, lockText(f));
  // A file added to a package's folder (RECORD untouched: the image's check calls it unlisted, info).
  json added = audit(image("added", "echo 'import os' > $S/lockext/extra.py"), lock, "--wheels " + f.wheels);
  EXPECT_EQ(lockFindings(added), std::multiset<std::string>{"python.lock.file " + kSite + "/lockext/extra.py"})
      << added["findings"].dump(1);
  // Another version installed.
  json other = audit(image("other", "PIP_CONFIG_FILE=/dev/null $R/opt/venv/bin/python -m pip "
                                    "install -q --no-index --find-links " +
                                        f.wheels + " lockpure==2.0 2>&1"),
                     lock, "--wheels " + f.wheels);
  EXPECT_EQ(lockFindings(other), std::multiset<std::string>{"python.lock.version lockpure"})
      << other["findings"].dump(1);
  // A package the lock lacks.
  json stray = audit(image("stray", "PIP_CONFIG_FILE=/dev/null $R/opt/venv/bin/python -m pip "
                                    "install -q --no-index --find-links " +
                                        f.wheels + " lockstray 2>&1"),
                     lock);
  EXPECT_EQ(lockFindings(stray), std::multiset<std::string>{"python.lock.extra lockstray"})
      << stray["findings"].dump(1);
  // A lock whose environments exclude the image's platform.
  std::string windows = f.dir + "/windows.toml";
  writeFile(windows, lockText(f, "[\"sys_platform == 'win32'\"]"));
  json excluded = audit(image("excluded"), windows);
  EXPECT_EQ(lockFindings(excluded), std::multiset<std::string>{"python.lock.platform"})
      << excluded["findings"].dump(1);
  // A wheel in --wheels whose bytes are not the lock's: not used, its files judged by RECORD alone.
  std::string bad = f.dir + "/bad-wheels";
  std::string ext = wheelOf(f, "lockext-1.0-");
  ASSERT_EQ(run("rm -rf " + bad + " && cp -a " + f.wheels + " " + bad + " && echo x >> " + bad + "/" + ext).code, 0);
  json wrong = audit(image("wrong-wheel"), lock, "--wheels " + bad);
  EXPECT_EQ(lockFindings(wrong), (std::multiset<std::string>{"python.lock.unchecked lockext", "python.lock.wheel lockext"}))
      << wrong["findings"].dump(1);
}

TEST(LockAudit, ARequirementsFileWithHashesIsALock) {
  NEEDS_FIXTURE();
  std::string req = f.dir + "/requirements.txt";
  writeFile(req, "pip==23.0.1 --hash=sha256:" + f.sha.at(wheelOf(f, "pip-")) + "\nsetuptools==66.1.1 --hash=sha256:" +
                     f.sha.at(wheelOf(f, "setuptools-")) + "\nlockpure==1.0 \\\n    --hash=sha256:" +
                     f.sha.at("lockpure-1.0-py3-none-any.whl") + "\nlockext==1.0 --hash=sha256:" +
                     f.sha.at(wheelOf(f, "lockext-1.0-")) + "\n");
  json clean = audit(image("req-clean"), req, "--wheels " + f.wheels);
  EXPECT_EQ(lockFindings(clean), std::multiset<std::string>{}) << clean["findings"].dump(1);
  const json* pure = packageOf(clean, "lockpure");
  ASSERT_NE(pure, nullptr);
  EXPECT_EQ((*pure)["lock"]["files_evidence"], "wheel") << pure->dump(1);
  json rewritten = audit(image("req-added", "echo 1 > $S/lockpure/more.txt"), req, "--wheels " + f.wheels);
  EXPECT_EQ(lockFindings(rewritten), std::multiset<std::string>{"python.lock.file " + kSite + "/lockpure/more.txt"});
}

TEST(LockAudit, AMalformedLockIsOneLineAndExitTwo) {
  NEEDS_FIXTURE();
  std::string dir = f.dir + "/malformed";
  ASSERT_EQ(run("mkdir -p " + dir).code, 0);
  std::string sha = std::string(64, 'a');
  struct Case {
    std::string name, text, says;
  } cases[] = {
      {"bad.toml", "lock-version = \"1.0\"\n[[packages]\n", "line 2"},
      {"noversion.toml", "lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\n", "no version"},
      {"short.toml",
       "lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = \"1\"\nwheels = [{ name = "
       "\"x-1-py3-none-any.whl\", hashes = { sha256 = \"abc\" } }]\n",
       "64 lower-case hex"},
      {"marker.toml", "lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = \"1\"\nmarker = \"os_name ==\"\n"
                      "wheels = [{ name = \"x-1-py3-none-any.whl\", hashes = { sha256 = \"" + sha + "\" } }]\n",
       "marker"},
      {"requirements.txt", "x>=1\n", "not pinned"},
  };
  for (const auto& c : cases) {
    writeFile(dir + "/" + c.name, c.text);
    RunResult r = run(std::string(KERNODECK_BIN) + " audit rootfs:" + f.clean + " --lock " + dir + "/" + c.name);
    EXPECT_EQ(r.code, 2) << c.name << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.name), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.name << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.name;
  }
  writeFile(dir + "/pylock.toml", lockText(f));
  RunResult group =
      run(std::string(KERNODECK_BIN) + " audit rootfs:" + f.clean + " --lock " + dir + "/pylock.toml --lock-group nosuch");
  EXPECT_EQ(group.code, 2) << group.err;
}

}  // namespace integration_lock_audit_test
