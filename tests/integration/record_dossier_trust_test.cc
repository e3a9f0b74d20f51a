// What a dossier can be trusted for: `dossier build --sign-key` signs its manifest and
// `verify --key` / `replay --key` refuse one that is unsigned, signed by another key or
// re-manifested after tampering; a path the reference names outside the code root (and every
// --input-root) is not carried; a changed input is an error at build; a replay of a dossier
// that does not verify exits 1 with dossier verify's own findings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sys/stat.h>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"
#include "support.h"

namespace integration_record_dossier_trust_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;


// Rewrites DIR/MANIFEST.sha256 to match the files as they are now: what anyone who can write
// the dossier can do.
void remanifest(const std::string& dir) {
  std::string m;
  for (const auto& f : kernodeck::util::split(run("cd " + dir + " && find . -type f | sort").out, '\n')) {
    std::string rel = f.substr(f.find('/') + 1);
    if (f.empty() || rel == "MANIFEST.sha256" || rel == "MANIFEST.sha256.dsse") continue;
    m += kernodeck::util::sha256Hex(readFile(dir + "/" + rel)) + "  " + rel + "\n";
  }
  writeFile(dir + "/MANIFEST.sha256", m);
}

// A small project with one data file, its reference in proj/reference.json.
std::string project(const std::string& base) {
  std::string proj = base + "/proj";
  run("mkdir -p " + proj);
  writeFile(proj + "/data.txt", "the data\n");
  RunResult r = run("cd " + proj + " && " + K + " reference init --data corpus=data.txt --entry-point 'python x.py' " +
                    "--host-root /nonexistent -o reference.json");
  EXPECT_EQ(r.code, 0) << r.err;
  return proj;
}

json parsed(const RunResult& r) { return json::parse(r.out, nullptr, false); }

}  // namespace

TEST(RecordDossierTrust, SignedManifestIsCheckedAgainstTheKeyAndCatchesARemanifestedDossier) {
  std::string base = tempDir("dossier-sign"), proj = project(base), d = base + "/dossier";
  ASSERT_EQ(run("cd " + base +
                " && openssl genpkey -algorithm ed25519 -out a.pem 2>/dev/null && openssl pkey -in a.pem "
                "-pubout -out a.pub && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out b.pem "
                "2>/dev/null && openssl pkey -in b.pem -pubout -out b.pub")
                .code,
            0);
  RunResult b =
      run(K + " dossier build --json " + d + " --reference " + proj + "/reference.json --sign-key " + base + "/a.pem");
  ASSERT_EQ(b.code, 3) << b.err << b.out;  // written; no check report, so its verdict is incomplete
  EXPECT_TRUE(exists(d + "/MANIFEST.sha256.dsse"));
  EXPECT_EQ(parsed(b)["signature"]["algorithm"], "ed25519") << b.out;
  // A public key cannot sign.
  EXPECT_EQ(
      run(K + " dossier build " + base + "/d2 --reference " + proj + "/reference.json --sign-key " + base + "/a.pub")
          .code,
      2);

  RunResult ok = run(K + " dossier verify --json " + d + " --key " + base + "/a.pub");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_EQ(countFindings(parsed(ok), "dossier.signature.verified"), 1) << ok.out;
  RunResult other = run(K + " dossier verify --json " + d + " --key " + base + "/b.pub");
  EXPECT_EQ(other.code, 1) << other.out;
  EXPECT_EQ(countFindings(parsed(other), "dossier.signature.invalid"), 1) << other.out;
  RunResult otherReplay = run(K + " dossier replay --json " + d + " --key " + base + "/b.pub");
  EXPECT_EQ(otherReplay.code, 1) << otherReplay.out;
  EXPECT_EQ(countFindings(parsed(otherReplay), "dossier.signature.invalid"), 1) << otherReplay.out;
  EXPECT_EQ(otherReplay.err.find("would run"), std::string::npos) << otherReplay.err;  // no plan made

  // Tampered with, then re-manifested: the manifest alone passes, the key does not.
  json ref = json::parse(readFile(d + "/reference.json"));
  ref["code"]["entry_point"] = "python evil.py";
  writeFile(d + "/reference.json", ref.dump(2));
  remanifest(d);
  EXPECT_EQ(run(K + " dossier verify " + d).code, 0);
  RunResult caught = run(K + " dossier verify --json " + d + " --key " + base + "/a.pub");
  EXPECT_EQ(caught.code, 1) << caught.out;
  EXPECT_EQ(countFindings(parsed(caught), "dossier.signature.invalid"), 1) << caught.out;
  EXPECT_NE(caught.out.find("another MANIFEST.sha256"), std::string::npos) << caught.out;
  RunResult caughtRun =
      run(K + " dossier replay --run --json --work " + base + "/w " + d + " --key " + base + "/a.pub");
  EXPECT_EQ(caughtRun.code, 1) << caughtRun.out;
  EXPECT_FALSE(exists(base + "/w"));  // nothing started

  // Unsigned: refused with --key, for verify and replay alike.
  ASSERT_EQ(::unlink((d + "/MANIFEST.sha256.dsse").c_str()), 0);
  RunResult unsignedVerify = run(K + " dossier verify --json " + d + " --key " + base + "/a.pub");
  EXPECT_EQ(unsignedVerify.code, 1);
  EXPECT_EQ(countFindings(parsed(unsignedVerify), "dossier.unsigned"), 1) << unsignedVerify.out;
  RunResult unsignedReplay = run(K + " dossier replay --json " + d + " --key " + base + "/a.pub");
  EXPECT_EQ(unsignedReplay.code, 1);
  EXPECT_EQ(countFindings(parsed(unsignedReplay), "dossier.unsigned"), 1) << unsignedReplay.out;
  // A key file that is not a key is a usage error.
  writeFile(base + "/junk.pub", "not a key\n");
  EXPECT_EQ(run(K + " dossier verify " + d + " --key " + base + "/junk.pub").code, 2);
}

TEST(RecordDossierTrust, PathsOutsideTheCodeRootAreNotCarriedAndAChangedInputIsAnError) {
  std::string base = tempDir("dossier-paths"), proj = project(base);
  run("mkdir -p " + base + "/outside");
  writeFile(base + "/outside/secret.txt", "not the project's\n");
  json ref = json::parse(readFile(proj + "/reference.json"));
  ref["data"][0]["path"] = "../outside/secret.txt";
  ref["data"][0]["sha256"] = kernodeck::util::sha256Hex(readFile(base + "/outside/secret.txt"));
  ref["data"][0]["size"] = readFile(base + "/outside/secret.txt").size();
  writeFile(proj + "/escape.json", ref.dump(2));
  for (std::string path : {std::string("../outside/secret.txt"), std::string("../../../../../../etc/shadow")}) {
    ref["data"][0]["path"] = path;
    writeFile(proj + "/escape.json", ref.dump(2));
    std::string d = base + "/d-" + std::to_string(path.size());
    RunResult r = run(K + " dossier build --json " + d + " --reference " + proj + "/escape.json");
    EXPECT_EQ(r.code, 3) << path << r.err << r.out;
    EXPECT_NE(r.err.find("lies outside the code root"), std::string::npos) << path << r.err;
    EXPECT_FALSE(exists(d + "/inputs/data/corpus")) << path;
  }
  // A folder given on the command line is a root too.
  ref["data"][0]["path"] = "../outside/secret.txt";
  writeFile(proj + "/escape.json", ref.dump(2));
  RunResult allowed = run(K + " dossier build " + base + "/d-allowed --reference " + proj +
                          "/escape.json --input-root " + base + "/outside");
  EXPECT_EQ(allowed.code, 3) << allowed.err << allowed.out;  // written; no check report, so its verdict is incomplete
  EXPECT_EQ(readFile(base + "/d-allowed/inputs/data/corpus"), "not the project's\n");

  // The data changed after the reference: an error finding, named (the exit is 3, not 1: with no
  // check report the dossier's verdict is incomplete, which outranks a finding).
  writeFile(proj + "/data.txt", "other data\n");
  RunResult changed = run(K + " dossier build --json " + base + "/d-changed --reference " + proj + "/reference.json");
  EXPECT_EQ(changed.code, 3) << changed.out;
  EXPECT_EQ(countFindings(parsed(changed), "dossier.input.changed"), 1) << changed.out;
  for (const auto& f : parsed(changed)["findings"])
    if (f["code"] == "dossier.input.changed") {
      EXPECT_EQ(f["severity"], "error") << changed.out;
    }
}

TEST(RecordDossierTrust, ReplayOfADossierThatDoesNotVerifyExits1WithVerifysFindings) {
  std::string base = tempDir("dossier-modified"), proj = project(base), d = base + "/dossier";
  ASSERT_EQ(run(K + " dossier build " + d + " --reference " + proj + "/reference.json").code, 3);  // written; no check report, so its verdict is incomplete
  writeFile(d + "/inputs/data/corpus", "changed\n");
  ASSERT_EQ(::unlink((d + "/index.html").c_str()), 0);
  for (std::string flags : {std::string(), " --run --work " + base + "/w"}) {
    RunResult r = run(K + " dossier replay --json" + flags + " " + d);
    json j = parsed(r);
    ASSERT_TRUE(j.is_object()) << flags << r.err;
    EXPECT_EQ(r.code, 1) << flags << r.err << r.out;
    EXPECT_EQ(countFindings(j, "dossier.modified"), 1) << flags << r.out;
    EXPECT_EQ(countFindings(j, "dossier.missing"), 1) << flags << r.out;
    EXPECT_EQ(stepStatus(j, "verify"), "passed") << flags;
  }
  EXPECT_FALSE(exists(base + "/w/project"));
}

TEST(RecordDossierTrust, BuildWithRelativeDossierAndRepoPathsCarriesTheCode) {
  std::string base = tempDir("dossier-relative"), proj = base + "/app";
  const std::string git = "git -c user.email=t@example.org -c user.name=t ";
  run("mkdir -p " + proj);
  writeFile(proj + "/data.txt", "the data\n");
  ASSERT_EQ(run("cd " + proj + " && git init -q && " + git + "add -A && " + git + "commit -q -m app && " + K +
                " reference init --repo . --data corpus=data.txt --entry-point 'python x.py' --host-root /nonexistent "
                "-o reference.json")
                .code,
            0);
  RunResult b = run("cd " + base + " && " + K + " dossier build --json dossier --reference app/reference.json");
  EXPECT_EQ(b.code, 3) << b.err << b.out;  // written; no check report, so its verdict is incomplete
  EXPECT_EQ(countFindings(parsed(b), "dossier.code.not_carried"), 0) << b.out;
  EXPECT_NE(readFile(base + "/dossier/MANIFEST.sha256").find("  code.tar\n"), std::string::npos);
  EXPECT_FALSE(exists(proj + "/dossier"));  // nothing written into the repository
}

TEST(RecordDossierTrust, ThePlanPredictsAMissingInterpreterAndRequirementsPipCannotMeet) {
  std::string base = tempDir("dossier-plan"), proj = project(base), d = base + "/dossier";
  ASSERT_EQ(run(K + " dossier build " + d + " --reference " + proj + "/reference.json").code, 3);  // written; no check report, so its verdict is incomplete
  json good = json::parse(readFile(d + "/reference.json"));
  struct Case {
    const char* what;
    json python, lines;
    const char* says;
  } cases[] = {
      {"an interpreter that no longer exists",
       {{"interpreter", "/usr/bin/python3.99"}, {"version", "3.99.0"}},
       json::array({"numpy"}),
       "/usr/bin/python3.99 does not exist here: pass --python PATH"},
      {"a requirement nothing here provides",
       {{"interpreter", "/usr/bin/python3"}, {"version", "3.11.2"}},
       json::array({"numpy", "kdk-no-such-package==1.0"}),
       "No matching distribution found for kdk-no-such-package"},
  };
  for (const auto& c : cases) {
    json j = good;
    j["packages"]["python"] = c.python;
    j["packages"]["requirements"] = {{"sha256", std::string(64, '0')}, {"lines", c.lines}};
    writeFile(d + "/reference.json", j.dump(2));
    remanifest(d);
    RunResult r = run(K + " dossier replay --json " + d);
    EXPECT_EQ(r.code, 1) << c.what << r.err;
    EXPECT_GE(countFindings(parsed(r), "replay.cannot"), 1) << c.what << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.what << r.out;
  }
}

// Issue 39 section 10: `dossier replay --run --key` read code.tar from the folder again after
// verifying it, so whoever could write the folder during the replay swapped the code after it
// was hashed. A watcher (inotify) renames a swapped archive (its x.py leaves MARK-evil) over
// code.tar the moment the replay first opens it; the code carries 32 MB so that the first reader
// is still reading when the swap lands. The old binary hashed the signed archive through the
// descriptor it had open, then unpacked the swapped one and ran it (MARK-evil). Now the replay
// reads only its private copy, made by that first read, and the signed code runs.
TEST(RecordDossierTrust, CodeSwappedAfterItWasHashedNeverRuns) {
  std::string base = tempDir("dossier-swap"), proj = base + "/app", d = base + "/dossier";
  const std::string git = "git -c user.email=t@example.org -c user.name=t ";
  run("mkdir -p " + proj + " && head -c 33554432 /dev/urandom > " + proj + "/blob.bin");
  writeFile(proj + "/x.py", "open('" + base + "/MARK-good', 'w').write('ran')\n");
  ASSERT_EQ(run("cd " + base + " && openssl genpkey -algorithm ed25519 -out a.pem 2>/dev/null && openssl pkey -in "
                "a.pem -pubout -out a.pub")
                .code,
            0);
  ASSERT_EQ(run("cd " + proj + " && git init -q && " + git + "add -A && " + git + "commit -q -m app && " + K +
                " reference init --repo . --entry-point 'python x.py' --outputs out --python /usr/bin/python3 "
                "--host-root /nonexistent -o reference.json")
                .code,
            0);
  RunResult b =
      run(K + " dossier build " + d + " --reference " + proj + "/reference.json --sign-key " + base + "/a.pem");
  ASSERT_EQ(b.code, 3) << b.err;  // written and signed; no check report, so incomplete
  ASSERT_TRUE(exists(d + "/code.tar"));
  // The swapped archive: the same members, x.py writing MARK-evil.
  writeFile(base + "/swap.py",
            "import io, sys, tarfile\n"
            "src, dst, mark = sys.argv[1:]\n"
            "with tarfile.open(src) as i, tarfile.open(dst, 'w') as o:\n"
            "  for m in i.getmembers():\n"
            "    f = i.extractfile(m) if m.isfile() else None\n"
            "    if m.name.lstrip('./') == 'x.py':\n"
            "      b = (\"open('%s', 'w').write('ran')\\n\" % mark).encode(); m.size = len(b); f = io.BytesIO(b)\n"
            "    o.addfile(m, f)\n");
  ASSERT_EQ(run("/usr/bin/python3 " + base + "/swap.py " + d + "/code.tar " + base + "/evil.tar " + base + "/MARK-evil")
                .code,
            0);
  // Renames SRC over DIR/NAME when NAME is first opened (IN_OPEN), then exits.
  writeFile(base + "/watch.py",
            "import ctypes, os, struct, sys\n"
            "d, name, src, ready = sys.argv[1:5]\n"
            "libc = ctypes.CDLL('libc.so.6', use_errno=True)\n"
            "fd = libc.inotify_init1(0)\n"
            "if libc.inotify_add_watch(fd, d.encode(), 0x20) < 0: sys.exit(1)\n"
            "open(ready, 'w').close()\n"
            "while True:\n"
            "  buf = os.read(fd, 4096); off = 0\n"
            "  while off < len(buf):\n"
            "    wd, mask, cookie, ln = struct.unpack_from('iIII', buf, off)\n"
            "    n = buf[off + 16: off + 16 + ln].rstrip(b'\\0').decode(); off += 16 + ln\n"
            "    if n == name:\n"
            "      os.rename(src, os.path.join(d, name)); sys.exit(0)\n");
  RunResult r = run("timeout 120 /usr/bin/python3 " + base + "/watch.py " + d + " code.tar " + base + "/evil.tar " +
                    base + "/ready & while [ ! -e " + base + "/ready ]; do sleep 0.05; done; timeout 300 " + K +
                    " dossier replay --run --json --python /usr/bin/python3 --work " + base + "/w --key " + base +
                    "/a.pub " + d + "; rc=$?; wait; exit $rc");
  EXPECT_FALSE(exists(base + "/evil.tar")) << "the watcher did not swap the archive";
  EXPECT_FALSE(exists(base + "/MARK-evil")) << "the swapped code ran\n" << r.err;
  EXPECT_TRUE(exists(base + "/MARK-good")) << "the signed code did not run\n" << r.err << r.out;
  json j = parsed(r);
  ASSERT_TRUE(j.is_object()) << r.err;
  EXPECT_EQ(stepStatus(j, "run"), "passed") << r.out;
  EXPECT_EQ(j["subject"]["reference"], d) << r.out;  // named as given, not as the private copy
  // The folder as it is now (the swapped archive) no longer verifies.
  EXPECT_EQ(run(K + " dossier verify " + d + " --key " + base + "/a.pub").code, 1);
}

// Issue 39 section 8, the dossier's own outputs: `dossier build DIR` and `replay --work DIR` where
// another user planted DIR as a link (in a folder root owns that its group can write, outside the
// kernel's protected_symlinks rule). The old binary built the dossier wherever the link led.
TEST(RecordDossierTrust, AnOutputFolderLinkPlantedByAnotherUserIsNotFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "planting another user's link needs root";
  std::string base = tempDir("dossier-link"), proj = project(base);
  ASSERT_EQ(run("mkdir " + base + "/target " + base + "/shared && chmod 0775 " + base + "/shared && ln -s " + base +
                "/target " + base + "/shared/dossier && chown -h nobody " + base + "/shared/dossier && ln -s " + base +
                "/target " + base + "/shared/work && chown -h nobody " + base + "/shared/work")
                .code,
            0);
  RunResult b = run(K + " dossier build --json " + base + "/shared/dossier --reference " + proj + "/reference.json");
  EXPECT_EQ(b.code, 3) << b.err << b.out;
  EXPECT_NE(b.err.find("uid 65534"), std::string::npos) << b.err;
  EXPECT_TRUE(std::filesystem::is_empty(base + "/target")) << "the dossier was written through the link";
  // A dossier of its own, replayed with --work through the link: refused before anything runs.
  ASSERT_EQ(run(K + " dossier build " + base + "/d --reference " + proj + "/reference.json").code, 3);
  RunResult r = run(K + " dossier replay --run --json --python /usr/bin/python3 --work " + base + "/shared/work " +
                    base + "/d");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE((r.err + r.out).find("uid 65534"), std::string::npos) << r.err << r.out;
  EXPECT_TRUE(std::filesystem::is_empty(base + "/target")) << "the replay wrote through the link";
}

}  // namespace integration_record_dossier_trust_test
