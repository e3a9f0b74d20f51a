// What a dossier can be trusted for: `dossier build --sign-key` signs its manifest and
// `verify --key` / `replay --key` refuse one that is unsigned, signed by another key or
// re-manifested after tampering; a path the reference names outside the code root (and every
// --input-root) is not carried; a changed input is an error at build; a replay of a dossier
// that does not verify exits 1 with dossier verify's own findings.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"
#include "support.h"

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
