// `kernodeck audit --exceptions` on the demo image (examples/demo/image.json): a file that waives
// its pin mismatch, the suppressed finding in every format (the SARIF checked by the pinned
// multitool with GitHub's rules), an expired entry, an unused one, a refused waiver of a digest
// mismatch, a malformed file, `diff --format markdown` of the audits before and after, and the
// signed report (`audit --attach --sign-key`) carrying what was waived, as `reports --key` shows.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"
#include "local_registry.h"
#include "npm_checkers.h"
#include "support.h"

namespace integration_exceptions_test {

using nlohmann::json;
using namespace kdktest;
namespace fs = std::filesystem;

namespace {

const std::string K = KERNODECK_BIN;

// YYYY-MM-DD, `days` from today (UTC).
std::string day(int days) {
  using namespace std::chrono;
  year_month_day d{floor<std::chrono::days>(system_clock::now()) + std::chrono::days{days}};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(d.year()), static_cast<unsigned>(d.month()),
                static_cast<unsigned>(d.day()));
  return buf;
}

std::string entry(const std::string& code, const std::string& extra, const std::string& reason, int days) {
  return "  - code: " + code + "\n" + extra + "    reason: \"" + reason + "\"\n    expires: " + day(days) + "\n";
}

const std::string kHead = "schema: kernodeck.exceptions/v1\nexceptions:\n";
const std::string kPin = entry("python.pin.mismatch", "    package: model-server\n    path: \"app/requirements.txt*\"\n",
                               "0.3.0 is the tested build; the pin moves in 1.5", 60);

class Exceptions : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(tempDir("exceptions"));
    ok_ = !mkimage(json::parse(readFile(std::string(SOURCE_DIR) + "/examples/demo/image.json")), *dir_ + "/demo")
               .empty();
  }
  void SetUp() override { ASSERT_TRUE(ok_) << "kdk-mkimage failed on examples/demo/image.json"; }
  static std::string demo() { return "oci:" + *dir_ + "/demo:1.0"; }
  static std::string file(const std::string& name, const std::string& text) {
    std::string p = *dir_ + "/" + name;
    writeFile(p, text);
    return p;
  }
  // An ed25519 key pair, NAME.pem and NAME.pub under the suite's folder; the common path of both.
  static std::string edKey(const std::string& name) {
    std::string k = *dir_ + "/" + name;
    RunResult r = run("openssl genpkey -algorithm ed25519 -out " + k + ".pem && openssl pkey -in " + k +
                      ".pem -pubout -out " + k + ".pub");
    EXPECT_EQ(r.code, 0) << r.err;
    return k;
  }
  // The three waivers the signed tests use: the pin mismatch, the credential, the conflict.
  static std::string threeWaivers() {
    return kHead + kPin + entry("image.secret.env", "", "a read-only mirror token", 30) +
           entry("python.requirement.conflict", "", "numpy 1.26 is tested with it", 30);
  }
  static std::string* dir_;
  static bool ok_;
};
std::string* Exceptions::dir_ = nullptr;
bool Exceptions::ok_ = false;

const json* findingOf(const json& r, const std::string& code) {
  for (const auto& f : r["findings"])
    if (f["code"] == code) return &f;
  return nullptr;
}

TEST_F(Exceptions, DemoPinMismatchWaivedInEveryFormat) {
  std::string ex = file("pin.yaml", kHead + kPin);
  int code = -1;
  json r = auditJson("--exceptions " + ex + " " + demo(), &code);
  // The credential and the requirement conflict are still errors: the audit fails on them.
  EXPECT_EQ(code, 1);
  const json* pin = findingOf(r, "python.pin.mismatch");
  ASSERT_NE(pin, nullptr) << r.dump(1);
  EXPECT_EQ((*pin)["suppression"]["reason"], "0.3.0 is the tested build; the pin moves in 1.5");
  EXPECT_EQ((*pin)["suppression"]["expires"], day(60));
  EXPECT_EQ(r["summary"]["findings"]["error"], 2);
  EXPECT_EQ(r["summary"]["suppressed"]["error"], 1);
  EXPECT_EQ(r["exceptions"]["files"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(findingOf(r, "exception.unused"), nullptr);

  RunResult text = run(K + " audit --exceptions " + ex + " " + demo());
  EXPECT_EQ(text.code, 1);
  EXPECT_NE(text.out.find("Suppressed by exceptions (1)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("reason: 0.3.0 is the tested build; the pin moves in 1.5 (expires " + day(60)),
            std::string::npos)
      << text.out;
  RunResult html = run(K + " audit --format html --exceptions " + ex + " " + demo());
  EXPECT_NE(html.out.find("<table id=\"suppressed\">"), std::string::npos);
  EXPECT_NE(html.out.find("0.3.0 is the tested build; the pin moves in 1.5</td>"), std::string::npos);
  RunResult md = run(K + " audit --format markdown --exceptions " + ex + " " + demo());
  EXPECT_EQ(md.code, 1);
  EXPECT_NE(md.out.find("## kernodeck audit: ❌ FAIL"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| error | 2 | 1 |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("0.3.0 is the tested build; the pin moves in 1.5 |"), std::string::npos) << md.out;

  std::string sarif = *dir_ + "/pin.sarif";
  RunResult s = run(K + " audit --format sarif -o " + sarif + " --exceptions " + ex + " " + demo());
  EXPECT_EQ(s.code, 1) << s.err;
  json j = json::parse(readFile(sarif));
  int suppressed = 0;
  for (const auto& res : j["runs"][0]["results"])
    if (res.contains("suppressions")) {
      ++suppressed;
      EXPECT_EQ(res["ruleId"], "python.pin.mismatch");
      EXPECT_EQ(res["suppressions"][0]["kind"], "external");
      EXPECT_EQ(res["suppressions"][0]["status"], "accepted");
      EXPECT_NE(res["suppressions"][0]["justification"].get<std::string>().find("the pin moves in 1.5"),
                std::string::npos);
    }
  EXPECT_EQ(suppressed, 1);
  if (auto missing = npmCheckersMissing(); !missing.empty()) GTEST_SKIP() << "needs " << missing;
  auto errors = sarifMultitoolErrors(sarif, sarif + ".log");
  EXPECT_TRUE(errors.empty()) << kernodeck::util::join(errors, "\n");
}

TEST_F(Exceptions, PassesWhenEveryErrorIsWaivedAndUnusedIsInfo) {
  std::string ex = file("all.yaml", kHead + kPin +
                                        entry("image.secret.env", "", "a read-only token for the public mirror", 30) +
                                        entry("python.requirement.conflict", "    package: model-server\n",
                                              "numpy 1.26 is tested with it", 30) +
                                        entry("os.package.modified", "", "nothing matches this", 30));
  int code = -1;
  json r = auditJson("--exceptions " + ex + " " + demo(), &code);
  EXPECT_EQ(code, 0) << r["summary"].dump();
  EXPECT_EQ(r["summary"]["verdict"], "pass");
  const json* unused = findingOf(r, "exception.unused");
  ASSERT_NE(unused, nullptr);
  EXPECT_EQ((*unused)["severity"], "info");
  EXPECT_NE((*unused)["message"].get<std::string>().find(ex + ": exceptions[3] (os.package.modified)"),
            std::string::npos);
  // The warning is still live: --fail-on warning fails.
  EXPECT_EQ(run(K + " audit --fail-on warning --exceptions " + ex + " " + demo()).code, 1);
}

TEST_F(Exceptions, AnExpiredEntryFailsTheAudit) {
  std::string all = kHead + entry("python.pin.mismatch", "", "was fine last month", -1) +
                    entry("image.secret.env", "", "r", 30) + entry("python.requirement.conflict", "", "r", 30);
  int code = -1;
  json r = auditJson("--exceptions " + file("expired.yaml", all) + " " + demo(), &code);
  EXPECT_EQ(code, 1);
  const json* expired = findingOf(r, "exception.expired");
  ASSERT_NE(expired, nullptr);
  EXPECT_EQ((*expired)["severity"], "error");
  EXPECT_NE((*expired)["message"].get<std::string>().find("exceptions[0] (python.pin.mismatch) expired on " + day(-1)),
            std::string::npos);
  EXPECT_FALSE(findingOf(r, "python.pin.mismatch")->contains("suppression"));
}

TEST_F(Exceptions, ADigestMismatchCannotBeWaived) {
  std::string dir = *dir_ + "/tampered";
  fs::remove_all(dir);
  fs::copy(*dir_ + "/demo", dir, fs::copy_options::recursive);
  json index = json::parse(readFile(dir + "/index.json"));
  std::string m = index["manifests"][0]["digest"];
  json manifest = json::parse(readFile(dir + "/blobs/sha256/" + m.substr(7)));
  std::string cfg = dir + "/blobs/sha256/" + manifest["config"]["digest"].get<std::string>().substr(7);
  std::string bytes = readFile(cfg);
  size_t at = bytes.find("HF_TOKEN");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 8, "HF_TOKEX");  // same size, other bytes
  fs::permissions(cfg, fs::perms::owner_write, fs::perm_options::add);
  writeFile(cfg, bytes);
  std::string ex = file("digest.yaml", kHead + entry("blob.digest.mismatch", "", "we rebuilt it by hand", 30));
  int code = -1;
  json r = auditJson("--exceptions " + ex + " oci:" + dir + ":1.0", &code);
  EXPECT_EQ(code, 1);
  const json* mismatch = findingOf(r, "blob.digest.mismatch");
  ASSERT_NE(mismatch, nullptr) << r.dump(1);
  EXPECT_FALSE(mismatch->contains("suppression"));
  const json* refused = findingOf(r, "exception.refused");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ((*refused)["severity"], "error");
  EXPECT_EQ(r["exceptions"]["files"][0]["entries"][0]["status"], "refused");
}

TEST_F(Exceptions, AMalformedFileIsAUsageErrorNamingFileAndEntry) {
  struct Case {
    std::string text, error;
  } cases[] = {
      {kHead + "  - code: a.b\n    reason: r\n    expires: " + day(30) + "\n    severity: info\n",
       "exceptions[0] (a.b): unknown field 'severity'"},
      {kHead + kPin + "  - code: a.b\n    expires: " + day(30) + "\n", "exceptions[1] (a.b): 'reason' is required"},
      {kHead + "  - code: a.b\n    reason: r\n", "exceptions[0] (a.b): 'expires' is required"},
      {kHead + entry("a.b", "", "r", 400), "exceptions[0] (a.b): expires " + day(400) + " is more than a year ahead"},
      {kHead + "  - code: a.b\n    reason: r\n    expires: 2027-13-01\n",
       "exceptions[0] (a.b): expires '2027-13-01' is not a date YYYY-MM-DD"},
  };
  for (const auto& c : cases) {
    std::string ex = file("bad.yaml", c.text);
    RunResult r = run(K + " audit --exceptions " + ex + " " + demo());
    EXPECT_EQ(r.code, 2) << c.text;
    EXPECT_NE(r.err.find("--exceptions: " + ex + ": " + c.error), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  RunResult missing = run(K + " audit --exceptions " + *dir_ + "/nope.yaml " + demo());
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("nope.yaml"), std::string::npos);
}

TEST_F(Exceptions, DiffMarkdownShowsFindingsAndExceptions) {
  std::string a = *dir_ + "/a.json", b = *dir_ + "/b.json";
  ASSERT_EQ(run(K + " audit --json -o " + a + " " + demo()).code, 1);
  ASSERT_EQ(run(K + " audit --json -o " + b + " --exceptions " + file("d.yaml", kHead + kPin) + " " + demo()).code, 1);
  RunResult d = run(K + " diff --format markdown " + a + " " + b);
  EXPECT_EQ(d.code, 1) << d.err;  // an exception added is a warning
  EXPECT_NE(d.out.find("## kernodeck diff:"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("### Exceptions added (1)"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("python.pin.mismatch package model\\-server"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("**Packages:** 0 added, 0 removed, 0 changed"), std::string::npos) << d.out;
  RunResult same = run(K + " diff --format markdown " + a + " " + a);
  EXPECT_EQ(same.code, 0);
  EXPECT_NE(same.out.find("No differences."), std::string::npos) << same.out;
  EXPECT_EQ(run(K + " diff --format sarif " + a + " " + b).code, 2);
}

TEST_F(Exceptions, TheSignedReportCarriesWhatWasWaivedAndTheFilesDigest) {
  LocalRegistry reg;
  if (!reg.start() || !haveTool("openssl")) GTEST_SKIP() << "docker-registry, skopeo or openssl unavailable";
  ASSERT_TRUE(reg.push(*dir_ + "/demo", "1.0", "team/demo:1.0"));
  std::string k = edKey("ed");
  std::string text = threeWaivers();
  std::string ex = file("signed.yaml", text);
  std::string image = reg.host() + "/team/demo:1.0";
  RunResult audit = run(K + " audit --no-cache --attach --sign-key " + k + ".pem --exceptions " + ex + " " + image);
  ASSERT_EQ(audit.code, 0) << audit.err << audit.out;
  RunResult listed = run(K + " reports --no-cache --json --key " + k + ".pub " + image);
  EXPECT_EQ(listed.code, 0) << listed.out << listed.err;
  json j = json::parse(listed.out, nullptr, false);
  ASSERT_EQ(j["reports"].size(), 1u) << listed.out;
  EXPECT_EQ(j["reports"][0]["signature"], "verified");
  EXPECT_EQ(j["reports"][0]["verdict"], "pass");
  const json& e = j["reports"][0]["signed"]["exceptions"];
  ASSERT_TRUE(e.is_object()) << listed.out;
  EXPECT_EQ(e["files"][0]["sha256"], kernodeck::util::sha256Hex(text));
  EXPECT_EQ(e["suppressed"]["error"], 3);
  ASSERT_EQ(e["findings"].size(), 3u);
  bool pin = false;
  for (const auto& f : e["findings"])
    if (f["code"] == "python.pin.mismatch") {
      pin = true;
      EXPECT_EQ(f["reason"], "0.3.0 is the tested build; the pin moves in 1.5");
      EXPECT_EQ(f["expires"], day(60));
    }
  EXPECT_TRUE(pin) << e.dump(1);
  RunResult people = run(K + " reports --no-cache --key " + k + ".pub " + image);
  EXPECT_NE(people.out.find("exceptions: 3 error, 0 warning, 0 info suppressed"), std::string::npos) << people.out;
  EXPECT_NE(people.out.find("sha256:" + kernodeck::util::sha256Hex(text)), std::string::npos) << people.out;
}

// The same file through `fleet run --exceptions` (every report of the worker waives what it lists),
// and what the gate shows of it: the demo audited by the fleet without the file gets a signed
// fail and the gate refuses; audited again with it, a signed pass, which the gate admits with a
// `report.exceptions` line naming what that audit waived (shown, never deciding).
TEST_F(Exceptions, FleetRunWaivesInItsSignedReportsAndTheGateShowsWhat) {
  LocalRegistry reg;
  if (!reg.start() || !haveTool("openssl")) GTEST_SKIP() << "docker-registry, skopeo or openssl unavailable";
  ASSERT_TRUE(reg.push(*dir_ + "/demo", "1.0", "team/demo:1.0"));
  std::string k = edKey("fleet-ed");
  std::string ex = file("fleet.yaml", threeWaivers());
  std::string image = reg.host() + "/team/demo:1.0";
  std::string byDigest = reg.host() + "/team/demo@" + reg.digestOf("team/demo:1.0");
  writeFile(*dir_ + "/fleet-refs.txt", image + "\n");
  std::string plan = *dir_ + "/fleet-plan.json";
  RunResult p = run(K + " fleet plan " + *dir_ + "/fleet-refs.txt --shards 1 --cache-repo " + reg.host() +
                    "/kernodeck/cache -o " + plan);
  ASSERT_EQ(p.code, 0) << p.err;
  std::string worker = K + " fleet run --plan " + plan + " --shard 0 --wait 0 --sign-key " + k + ".pem --cache-dir ";
  std::string gate = K + " gate --retries 0 --key " + k + ".pub --image " + byDigest;

  RunResult r = run(worker + tempDir("fleet-ex"));
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  RunResult g = run(gate);
  EXPECT_EQ(g.code, 1) << g.out << g.err;
  EXPECT_EQ((g.out + g.err).find("report.exceptions"), std::string::npos) << g.out << g.err;

  r = run(worker + tempDir("fleet-ex") + " --redo --exceptions " + ex);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  g = run(gate);
  EXPECT_EQ(g.code, 0) << g.out << g.err;
  std::string o = g.out + g.err;
  EXPECT_NE(o.find("report.exceptions"), std::string::npos) << o;
  EXPECT_NE(o.find("suppressed 3 finding(s) by exceptions"), std::string::npos) << o;
  EXPECT_NE(o.find("python.pin.mismatch"), std::string::npos) << o;
  // The JSON report of the gate carries the signed exceptions under the chosen report.
  RunResult gj = run(gate + " --json");
  json j = json::parse(gj.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << gj.out << gj.err;
  EXPECT_NE(j.dump().find("\"suppressed\""), std::string::npos) << gj.out;
  const json* f = findingOf(j, "report.exceptions");
  ASSERT_NE(f, nullptr) << gj.out;
  EXPECT_EQ((*f)["severity"], "info");
}

}  // namespace
}  // namespace integration_exceptions_test
