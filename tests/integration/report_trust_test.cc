// What someone who can push to the registry, but holds no signing key, can do to the reports
// attached to an image, run against Debian's docker-registry through the real binary:
// - re-push an older signed pass with created=2099 after a newer signed fail, or rewrite the
//   fallback tag's index so the old pass comes last: the gate still fails (reports are ordered
//   by the signed time);
// - nothing, once a report is older than --max-age: it does not count;
// - attach a malformed referrer beside a valid signed pass: it is skipped with a finding naming
//   it and the gate passes on the verified report.
#include <gtest/gtest.h>

#include <thread>

#include "kernodeck/registry/referrers.h"
#include "local_registry.h"
#include "support.h"

namespace integration_report_trust_test {

using nlohmann::json;
using namespace kdktest;
using namespace kernodeck;

namespace {

const std::string K = KERNODECK_BIN;

class ReportTrust : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reg_ = new LocalRegistry;
    if (!reg_->start() || !haveTool("openssl")) return;
    dir_ = new std::string(tempDir("report-trust"));
    for (const char* name : {"replay", "index", "age", "malformed"}) {
      json entries = json::array({{{"path", "etc/os-release"}, {"content", "ID=trust\n"}},
                                  {{"path", std::string("app/") + name}, {"content", name}}});
      json spec = {{"tag", "1.0"}, {"layers", json::array({{{"entries", entries}}})}};
      mkimage(spec, *dir_ + "/" + name);
      if (!reg_->push(*dir_ + "/" + name, "1.0", std::string("team/trust:") + name)) return;
    }
    std::string k = *dir_ + "/";
    // A requirement the images do not meet: the same image audited with it fails.
    writeFile(k + "req.txt", "kernodeck-absent-package==1.0\n");
    ready_ = run("openssl genpkey -algorithm ed25519 -out " + k + "ed.pem && openssl pkey -in " + k +
                 "ed.pem -pubout -out " + k + "ed.pub")
                 .code == 0;
  }
  static void TearDownTestSuite() { delete reg_; }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "docker-registry, skopeo, curl or openssl unavailable";
  }
  static std::string image(const std::string& tag) { return reg_->host() + "/team/trust:" + tag; }
  static std::string byDigest(const std::string& tag) {
    return reg_->host() + "/team/trust@" + reg_->digestOf("team/trust:" + tag);
  }
  static std::string key(const std::string& name) { return *dir_ + "/" + name; }
  static registry::Client client() {
    return registry::Client(*registry::parseReference(reg_->host() + "/team/trust"),
                            registry::ClientOptions{.noCache = true});
  }
  // `kernodeck audit --attach --sign-key ed.pem [EXTRA] IMAGE`: its exit code.
  static int attach(const std::string& tag, const std::string& extra = "") {
    return run(K + " audit --no-cache --attach --sign-key " + key("ed.pem") + " " + extra + " " + image(tag)).code;
  }
  // `kernodeck probe --require-report --key ed.pub --image TAG@DIGEST [EXTRA] --json`, parsed.
  static json gate(const std::string& tag, int* code, const std::string& extra = "") {
    RunResult r = run(K +
                      " probe --json --expect cpu --host-record /nonexistent --host-root /nonexistent --retries 0 "
                      "--require-report --key " +
                      key("ed.pub") + " --image " + byDigest(tag) + " " + extra);
    *code = r.code;
    json j = json::parse(r.out, nullptr, false);
    if (!j.is_object()) ADD_FAILURE() << r.out << r.err;
    return j;
  }
  static json reports(const std::string& tag, int* code, const std::string& extra = "") {
    RunResult r = run(K + " reports --no-cache --json --key " + key("ed.pub") + " " + extra + " " + image(tag));
    *code = r.code;
    return json::parse(r.out, nullptr, false);
  }
  // The reports attached to TAG in Kernodeck's referrer layout as the fallback index lists them,
  // with their artifacts (the Sigstore bundles beside them are not listed).
  static std::vector<registry::FetchedArtifact> artifacts(const std::string& tag) {
    auto c = client();
    std::vector<registry::FetchedArtifact> out;
    auto refs = registry::listReferrers(c, *oci::parseDigest(reg_->digestOf("team/trust:" + tag)),
                                        "application/vnd.kernodeck.report.v1+json");
    if (!refs.ok()) return out;
    for (const auto& r : *refs)
      if (auto a = registry::fetchArtifact(c, r.desc.digest.str()); a.ok()) out.push_back(*a);
    return out;
  }

  static LocalRegistry* reg_;
  static std::string* dir_;
  static bool ready_;
};

LocalRegistry* ReportTrust::reg_ = nullptr;
std::string* ReportTrust::dir_ = nullptr;
bool ReportTrust::ready_ = false;

// The gate passes, or, where this machine cannot run the probe's compute step, at least the
// report step is met.
void expectGatePasses(const json& r, int code) {
  EXPECT_EQ(r["attached_report"]["met"], true) << "exit " << code << "\n" << r.dump(1);
  if (stepStatus(r, "compute") == "passed") {
    EXPECT_EQ(code, 0) << r.dump(1);
  }
}

TEST_F(ReportTrust, AnOlderPassRepushedAsNewerDoesNotOutrankANewerFail) {
  ASSERT_EQ(attach("replay"), 0);
  int code = -1;
  json first = gate("replay", &code);
  expectGatePasses(first, code);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(attach("replay", "-r " + key("req.txt")), 1);  // the same image, a stricter audit: fail
  json failed = gate("replay", &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(countFindings(failed, "probe.report.failed"), 1) << failed.dump(1);

  // The attacker re-pushes the older signed pass (its envelope unchanged) as a new artifact
  // whose created annotation says 2099.
  std::vector<registry::FetchedArtifact> arts = artifacts("replay");
  ASSERT_EQ(arts.size(), 2u);
  const registry::FetchedArtifact* pass = nullptr;
  for (const auto& a : arts)
    if (a.annotations.count("dev.kernodeck.verdict") && a.annotations.at("dev.kernodeck.verdict") == "pass") pass = &a;
  ASSERT_NE(pass, nullptr);
  auto c = client();
  auto envelope = c.smallBlob(pass->blobs.at(0), 1 << 24);
  ASSERT_TRUE(envelope.ok());
  registry::Artifact replay;
  replay.artifactType = "application/vnd.kernodeck.report.v1+json";
  replay.blobs.push_back({"application/vnd.dsse.envelope.v1+json", *envelope});
  replay.subject = pass->subject;
  replay.annotations = pass->annotations;
  replay.annotations["org.opencontainers.image.created"] = "2099-01-01T00:00:00Z";
  ASSERT_TRUE(registry::pushArtifact(c, replay).ok());
  json replayed = gate("replay", &code);
  EXPECT_EQ(code, 1) << replayed.dump(1);
  EXPECT_EQ(countFindings(replayed, "probe.report.failed"), 1) << replayed.dump(1);
  EXPECT_EQ(replayed["attached_report"]["met"], false);
  int rc = -1;
  json listed = reports("replay", &rc);
  EXPECT_EQ(rc, 1) << listed.dump(1);
  EXPECT_EQ(countFindings(listed, "report.failed"), 1) << listed.dump(1);
  EXPECT_EQ(listed["newest"]["verdict"], "fail");
}

TEST_F(ReportTrust, ARewrittenFallbackIndexOrdersNothing) {
  ASSERT_EQ(attach("index"), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(attach("index", "-r " + key("req.txt")), 1);
  // The index rewritten: the Sigstore bundles left out, the pass last, its entry's created
  // annotation in 2099, the fail's in 2000.
  auto c = client();
  auto subject = *oci::parseDigest(reg_->digestOf("team/trust:index"));
  auto index = c.manifest(registry::fallbackTag(subject));
  ASSERT_TRUE(index.ok());
  json j = json::parse(index->bytes), ours = json::array();
  for (const auto& m : j["manifests"])
    if (m["artifactType"] == "application/vnd.kernodeck.report.v1+json") ours.push_back(m);
  ASSERT_EQ(ours.size(), 2u);
  ASSERT_EQ(j["manifests"].size(), 4u);  // and the two bundles
  j["manifests"] = ours;
  for (auto& m : j["manifests"])
    m["annotations"]["org.opencontainers.image.created"] =
        m["annotations"]["dev.kernodeck.verdict"] == "pass" ? "2099-01-01T00:00:00Z" : "2000-01-01T00:00:00Z";
  if (j["manifests"][0]["annotations"]["dev.kernodeck.verdict"] == "pass")
    std::swap(j["manifests"][0], j["manifests"][1]);
  ASSERT_TRUE(c.putManifest(registry::fallbackTag(subject), j.dump(), oci::media::kOciIndex).ok());
  int code = -1;
  json r = gate("index", &code);
  EXPECT_EQ(code, 1) << r.dump(1);
  EXPECT_EQ(countFindings(r, "probe.report.failed"), 1) << r.dump(1);
}

TEST_F(ReportTrust, AReportOlderThanMaxAgeDoesNotCount) {
  ASSERT_EQ(attach("age"), 0);
  int code = -1;
  json young = reports("age", &code, "--max-age 1h");
  EXPECT_EQ(code, 0) << young.dump(1);
  EXPECT_EQ(young["decision"]["outcome"], "pass");
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  json old = gate("age", &code, "--max-age 2s");
  EXPECT_EQ(code, 1) << old.dump(1);
  EXPECT_EQ(countFindings(old, "probe.report.expired"), 1) << old.dump(1);
  EXPECT_EQ(countFindings(old, "report.age.exceeded"), 1) << old.dump(1);
  json listed = reports("age", &code, "--max-age 2s");
  EXPECT_EQ(code, 1);
  EXPECT_EQ(countFindings(listed, "report.expired"), 1) << listed.dump(1);
  json fresh = gate("age", &code, "--max-age 1d");
  expectGatePasses(fresh, code);
  // A duration without a unit, or none at all, is a usage error.
  EXPECT_EQ(run(K + " reports --no-cache --max-age 30 " + image("age")).code, 2);
  RunResult bad =
      run(K + " probe --require-report --key " + key("ed.pub") + " --image " + byDigest("age") + " --max-age soon");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--max-age"), std::string::npos) << bad.err;
}

TEST_F(ReportTrust, AMalformedReferrerBesideAGoodReportIsSkippedAndNamed) {
  ASSERT_EQ(attach("malformed"), 0);
  // An unsigned referrer, listed in the fallback index beside the signed pass by an entry that
  // is not a valid descriptor (a negative size: docker-registry stores it; it refuses an
  // annotation of the wrong JSON type, which parseReferrers' unit test covers).
  auto c = client();
  auto subject = *oci::parseDigest(reg_->digestOf("team/trust:malformed"));
  auto m = c.manifest(subject.str());
  ASSERT_TRUE(m.ok());
  registry::Artifact unsigned_;
  unsigned_.artifactType = "application/vnd.kernodeck.report.v1+json";
  unsigned_.blobs.push_back({"application/vnd.dsse.envelope.v1+json", "{}"});
  unsigned_.subject = oci::Descriptor{m->mediaType, subject, static_cast<int64_t>(m->bytes.size())};
  auto pushed = registry::pushArtifact(c, unsigned_);
  ASSERT_TRUE(pushed.ok());
  std::string bogus = pushed->digest.str();
  auto index = c.manifest(registry::fallbackTag(subject));
  ASSERT_TRUE(index.ok());
  json j = json::parse(index->bytes);
  for (auto& e : j["manifests"])
    if (e["digest"] == bogus) e["size"] = -1;
  auto put = c.putManifest(registry::fallbackTag(subject), j.dump(), oci::media::kOciIndex);
  ASSERT_TRUE(put.ok()) << put.error().message;
  int code = -1;
  json r = gate("malformed", &code);
  expectGatePasses(r, code);
  EXPECT_NE(code, 3) << r.dump(1);
  ASSERT_EQ(countFindings(r, "report.referrer.invalid"), 1) << r.dump(1);
  for (const auto& f : r["findings"])
    if (f["code"] == "report.referrer.invalid") {
      EXPECT_EQ(f["severity"], "warning");
      EXPECT_NE(f["message"].get<std::string>().find(bogus), std::string::npos) << f.dump();
    }
  json listed = reports("malformed", &code);
  EXPECT_EQ(code, 0) << listed.dump(1);
  EXPECT_EQ(countFindings(listed, "report.referrer.invalid"), 1) << listed.dump(1);
  EXPECT_EQ(listed["newest"]["signature"], "verified");
}

}  // namespace

}  // namespace integration_report_trust_test
