// The Sigstore bundle referrer `audit --attach --sign-key` writes as cosign 3 writes a key-signed
// attestation (--tlog-upload=false), against Debian's docker-registry (and the referrers-API
// front) through the real binary:
// - its manifest has cosign 3's layout (specs/BUNDLE_SPEC.md, pkg/oci/remote/write.go), and
//   Sigstore's own verifier (@sigstore/verify over @sigstore/bundle, npm:
//   tests/tools/sigstore_bundle_verify.js) accepts the bundle with the CI key under the hint it
//   computes itself, and refuses it after one byte of the payload changed or with another key;
// - `gate` and `reports` read images that carry only bundles (no referrer of Kernodeck's layout):
//   a pass passes, a newer fail fails, and the attacks of someone who can push but holds no key,
//   replayed in the bundle layout, fail closed: re-wraps and re-encodings of an older pass, a pass
//   signed for the future, an unsigned or another key's copy, a pass older than --max-age, a
//   bundle whose verification material names the attacker's key;
// - one statement in both layouts is one report (the bundle listed as a re-wrap);
// - container/k8s/admission/kyverno-ivpol.yaml's CEL (tests/container/kyverno_ivpol.js,
//   @bufbuild/cel) over the statements the binary signed: only a young, unsuppressed pass for the
//   image's own repository admits.
#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "kernodeck/attest/dsse.h"
#include "kernodeck/attest/sigstore_bundle.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/time.h"
#include "local_registry.h"
#include "npm_checkers.h"
#include "support.h"

namespace integration_sigstore_bundle_test {

using nlohmann::json;
using namespace kdktest;
using namespace kernodeck;

namespace {

const std::string K = KERNODECK_BIN;
const std::string kBundle = "application/vnd.dev.sigstore.bundle.v0.3+json";
const std::string kType = "https://kernodeck.dev/attestation/report/v3";

class SigstoreBundle : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reg_ = new LocalRegistry;
    if (!reg_->start() || !haveTool("openssl") || !haveTool("node") || !haveTool("python3")) return;
    if (!std::filesystem::exists(npmDir() + "/node_modules/@sigstore/verify/package.json") ||
        !std::filesystem::exists(npmDir() + "/node_modules/@bufbuild/cel/package.json"))
      return;
    front_ = new ReferrersFront;
    if (!front_->start(*reg_)) return;
    dir_ = new std::string(tempDir("sigstore-bundle"));
    const char* tags[] = {"layout", "pass", "fail", "future", "copy", "age", "both", "ivpol", "ivfail", "ivsup", "api"};
    for (const char* name : tags) {
      json entries = json::array({{{"path", "etc/os-release"}, {"content", "ID=bundle\n"}},
                                  {{"path", std::string("app/") + name}, {"content", name}}});
      mkimage({{"tag", "1.0"}, {"layers", json::array({{{"entries", entries}}})}}, *dir_ + "/" + name);
      if (!reg_->push(*dir_ + "/" + name, "1.0", std::string("team/bundle:") + name)) return;
    }
    // The same image in a second repository (a copy anyone who can push may make).
    if (!reg_->push(*dir_ + "/ivpol", "1.0", "team/other:ivpol")) return;
    std::string k = *dir_ + "/";
    writeFile(k + "req.txt", "kernodeck-absent-package==1.0\n");
    writeFile(k + "waive.yaml",
              "schema: kernodeck.exceptions/v1\nexceptions:\n  - code: python.pin.missing\n"
              "    reason: \"tested without it\"\n    expires: " +
                  util::utcTimestampMs(util::nowMs() + 30LL * 86400000).substr(0, 10) + "\n");
    ready_ = run("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " + k + "ci.pem && openssl pkey -in " +
                 k + "ci.pem -pubout -out " + k + "ci.pub && openssl genpkey -algorithm ed25519 -out " + k +
                 "ed.pem && openssl pkey -in " + k + "ed.pem -pubout -out " + k + "ed.pub && openssl genpkey -algorithm "
                 "ed25519 -out " + k + "other.pem && openssl pkey -in " + k + "other.pem -pubout -out " + k + "other.pub")
                 .code == 0;
  }
  static void TearDownTestSuite() {
    delete front_;
    delete reg_;
  }
  void SetUp() override {
    if (!ready_)
      GTEST_SKIP() << "docker-registry, skopeo, openssl, python3, node, @sigstore/verify or @bufbuild/cel (npm) "
                      "unavailable";
  }
  static std::string key(const std::string& name) { return *dir_ + "/" + name; }
  static std::string image(const std::string& tag, const std::string& repo = "team/bundle") {
    return reg_->host() + "/" + repo + ":" + tag;
  }
  static oci::Digest digest(const std::string& tag, const std::string& repo = "team/bundle") {
    return *oci::parseDigest(reg_->digestOf(repo + ":" + tag));
  }
  static std::string byDigest(const std::string& tag, const std::string& host = "") {
    return (host.empty() ? reg_->host() : host) + "/team/bundle@" + digest(tag).str();
  }
  static registry::Client client(const std::string& repo = "team/bundle") {
    return registry::Client(*registry::parseReference(reg_->host() + "/" + repo),
                            registry::ClientOptions{.noCache = true});
  }
  // `kernodeck audit --attach --sign-key KEY [EXTRA] IMAGE`: its exit code.
  static int attach(const std::string& tag, const std::string& extra = "", const std::string& k = "ci.pem") {
    RunResult r = run(K + " audit --no-cache --attach --sign-key " + key(k) + " " + extra + " " + image(tag));
    if (r.code != 0 && r.code != 1) ADD_FAILURE() << r.err;
    return r.code;
  }
  static RunResult gate(const std::string& tag, const std::string& extra = "", const std::string& host = "") {
    return run(K + " gate --json --retries 0 --key " + key("ci.pub") + " --image " + byDigest(tag, host) + " " + extra);
  }
  static RunResult reports(const std::string& tag, const std::string& extra = "") {
    return run(K + " reports --no-cache --json --key " + key("ci.pub") + " " + extra + " " + image(tag));
  }
  static json parsed(const RunResult& r) {
    json j = json::parse(r.out, nullptr, false);
    if (!j.is_object()) ADD_FAILURE() << r.out << r.err;
    return j;
  }
  // The bundle referrers of TAG: each manifest (parsed) and the bundle's bytes, in listing order.
  struct Listed {
    json manifest;
    registry::FetchedArtifact artifact;
    std::string bundle;
  };
  static std::vector<Listed> bundles(const std::string& tag) {
    auto c = client();
    std::vector<Listed> out;
    auto refs = registry::listReferrers(c, digest(tag), kBundle);
    if (!refs.ok()) return out;
    for (const auto& r : *refs) {
      auto m = c.manifest(r.desc.digest.str());
      auto a = registry::fetchArtifact(c, r.desc.digest.str());
      if (!m.ok() || !a.ok() || a->blobs.empty()) continue;
      auto b = c.smallBlob(a->blobs.front(), 1 << 20);
      if (b.ok()) out.push_back({json::parse(m->bytes), *a, *b});
    }
    return out;
  }
  // The statement inside a bundle, as bytes.
  static std::string payloadOf(const std::string& bundle) {
    json b = json::parse(bundle);
    std::string p;
    EXPECT_TRUE(util::base64Decode(b["dsseEnvelope"]["payload"].get<std::string>(), p));
    return p;
  }
  // Leaves only the Sigstore bundles in TAG's fallback index (no referrer of Kernodeck's layout;
  // the `.att` tag is not read by the gate): an image as cosign 3 alone would have attested it.
  static void keepOnlyBundles(const std::string& tag) {
    auto c = client();
    auto index = c.manifest(registry::fallbackTag(digest(tag)));
    ASSERT_TRUE(index.ok());
    json idx = json::parse(index->bytes), kept = json::array();
    for (const auto& e : idx["manifests"])
      if (e.value("artifactType", "") == kBundle) kept.push_back(e);
    ASSERT_FALSE(kept.empty());
    idx["manifests"] = kept;
    ASSERT_TRUE(c.putManifest(registry::fallbackTag(digest(tag)), idx.dump(), oci::media::kOciIndex).ok());
  }
  // Pushes BUNDLE (bytes) as a bundle referrer of TAG in REPO, with ANNOTATIONS.
  static void pushBundle(const std::string& tag, const std::string& bundle,
                         std::map<std::string, std::string> annotations = {}, const std::string& repo = "team/bundle") {
    auto c = client(repo);
    auto m = c.manifest(digest(tag, repo).str());
    ASSERT_TRUE(m.ok());
    registry::Artifact a = attest::bundleArtifact(
        bundle, oci::Descriptor{m->mediaType, m->digest, static_cast<int64_t>(m->bytes.size())}, kType, util::nowMs());
    for (const auto& [k, v] : annotations) a.annotations[k] = v;
    auto pushed = registry::pushArtifact(c, a);
    ASSERT_TRUE(pushed.ok()) << pushed.error().message;
  }
  // A bundle of STATEMENT signed with KEY (empty: unsigned), as cosign writes one.
  static std::string bundleOf(const std::string& statement, const std::string& k) {
    auto ci = attest::Key::fromFile(key(k.empty() ? "ci.pem" : k));
    EXPECT_TRUE(ci.ok());
    auto env = attest::signEnvelope("application/vnd.in-toto+json", statement, *ci);
    EXPECT_TRUE(env.ok());
    auto b = attest::makeSigstoreBundle(*env, *ci);
    EXPECT_TRUE(b.ok());
    if (!k.empty()) return *b;
    json j = json::parse(*b);
    j["dsseEnvelope"]["signatures"] = json::array();
    return j.dump();
  }
  // Runs Sigstore's verifier over BUNDLE with PUB; its exit code and summary.
  static json sigstoreVerify(const std::string& bundle, const std::string& pub, int* code, bool tamper = false) {
    std::string f = *dir_ + "/bundle.json";
    writeFile(f, bundle);
    RunResult r = run("KERNODECK_NPM_DIR=" + npmDir() + " node " + SOURCE_DIR + "/tests/tools/sigstore_bundle_verify.js " +
                      f + " " + key(pub) + (tamper ? " tamper" : ""));
    *code = r.code;
    json j = json::parse(r.out, nullptr, false);
    if (!j.is_object()) ADD_FAILURE() << r.out << r.err;
    return j;
  }

  static LocalRegistry* reg_;
  static ReferrersFront* front_;
  static std::string* dir_;
  static bool ready_;
};

LocalRegistry* SigstoreBundle::reg_ = nullptr;
ReferrersFront* SigstoreBundle::front_ = nullptr;
std::string* SigstoreBundle::dir_ = nullptr;
bool SigstoreBundle::ready_ = false;

TEST_F(SigstoreBundle, TheAttachWritesCosign3sLayoutAndSigstoresVerifierAcceptsIt) {
  ASSERT_EQ(attach("layout"), 0);
  std::vector<Listed> found = bundles("layout");
  ASSERT_EQ(found.size(), 1u);
  const json& m = found[0].manifest;
  // cosign 3's referrer (WriteAttestationNewBundleFormat, WriteReferrer): artifactType, the empty
  // config naming the artifactType too, one layer, the annotations, the subject.
  EXPECT_EQ(m["schemaVersion"], 2);
  EXPECT_EQ(m["mediaType"], "application/vnd.oci.image.manifest.v1+json");
  EXPECT_EQ(m["artifactType"], kBundle);
  EXPECT_EQ(m["config"]["mediaType"], "application/vnd.oci.empty.v1+json");
  EXPECT_EQ(m["config"]["digest"], "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  EXPECT_EQ(m["config"]["size"], 2);
  EXPECT_EQ(m["config"]["artifactType"], kBundle);
  ASSERT_EQ(m["layers"].size(), 1u);
  EXPECT_EQ(m["layers"][0]["mediaType"], kBundle);
  EXPECT_EQ(m["layers"][0]["size"], found[0].bundle.size());
  EXPECT_EQ(m["annotations"]["dev.sigstore.bundle.content"], "dsse-envelope");
  EXPECT_EQ(m["annotations"]["dev.sigstore.bundle.predicateType"], kType);
  EXPECT_TRUE(std::regex_match(m["annotations"]["org.opencontainers.image.created"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << m.dump();
  EXPECT_EQ(m["subject"]["digest"], digest("layout").str());
  // The bundle: a public key hint, no key, certificate, log entry or timestamp; one signature.
  json b = json::parse(found[0].bundle);
  EXPECT_EQ(b["mediaType"], kBundle);
  EXPECT_EQ(b["verificationMaterial"].size(), 1u) << b.dump();
  EXPECT_EQ(b["verificationMaterial"]["publicKey"].size(), 1u) << b.dump();
  EXPECT_EQ(b["dsseEnvelope"]["signatures"].size(), 1u);
  EXPECT_FALSE(b.contains("messageSignature"));
  json st = json::parse(payloadOf(found[0].bundle));
  EXPECT_EQ(st["subject"][0]["name"], reg_->host() + "/team/bundle");
  EXPECT_EQ(st["subject"][0]["digest"]["sha256"], digest("layout").encoded);

  int code = -1;
  json ok = sigstoreVerify(found[0].bundle, "ci.pub", &code);
  EXPECT_EQ(code, 0) << ok.dump();
  EXPECT_EQ(ok["verified"], true) << ok.dump();
  EXPECT_EQ(ok["bundleHint"], ok["hint"]) << ok.dump();  // the hint as cosign computes it
  EXPECT_EQ(ok["predicateType"], kType);
  json changed = sigstoreVerify(found[0].bundle, "ci.pub", &code, true);
  EXPECT_EQ(code, 1) << changed.dump();
  EXPECT_EQ(changed["verified"], false);
  json other = sigstoreVerify(found[0].bundle, "other.pub", &code);
  EXPECT_EQ(code, 1) << other.dump();

  // An Ed25519 CI key too.
  ASSERT_EQ(attach("layout", "", "ed.pem"), 0);
  found = bundles("layout");
  ASSERT_EQ(found.size(), 2u);
  int verified = 0;
  for (const auto& f : found) {
    json v = sigstoreVerify(f.bundle, "ed.pub", &code);
    verified += code == 0;
    if (code == 0) {
      sigstoreVerify(f.bundle, "ed.pub", &code, true);
      EXPECT_EQ(code, 1);
    }
  }
  EXPECT_EQ(verified, 1);
  // Without a key nothing is signed, so no bundle is written.
  RunResult unsigned_ = run(K + " audit --no-cache --attach --unsigned " + image("layout"));
  if (unsigned_.code == 2) unsigned_ = run(K + " audit --no-cache --attach " + image("layout"));
  EXPECT_EQ(unsigned_.code, 0) << unsigned_.err;
  EXPECT_EQ(bundles("layout").size(), 2u);
}

TEST_F(SigstoreBundle, ABundleAndKernodecksReferrerOfOneStatementAreOneReport) {
  ASSERT_EQ(attach("both"), 0);
  RunResult r = reports("both");
  json j = parsed(r);
  EXPECT_EQ(r.code, 0) << r.out;
  ASSERT_EQ(j["reports"].size(), 1u) << r.out;
  EXPECT_EQ(j["reports"][0]["rewraps"].size(), 1u) << r.out;
  EXPECT_EQ(j["reports"][0]["signature"], "verified");
}

TEST_F(SigstoreBundle, TheGatePassesAndFailsOnBundleOnlyImages) {
  ASSERT_EQ(attach("pass"), 0);
  ASSERT_NO_FATAL_FAILURE(keepOnlyBundles("pass"));
  RunResult g = gate("pass");
  json gj = parsed(g);
  EXPECT_EQ(g.code, 0) << g.out << g.err;
  RunResult r = reports("pass");
  json j = parsed(r);
  EXPECT_EQ(r.code, 0) << r.out;
  ASSERT_EQ(j["reports"].size(), 1u) << r.out;
  EXPECT_EQ(j["reports"][0]["layout"], "sigstore-bundle") << r.out;
  EXPECT_EQ(j["newest"]["signature"], "verified") << r.out;
  // Through the referrers API too (attached through the front, which indexes what is pushed
  // through it): the bundle type is asked for (percent-encoded) and read, one report with
  // Kernodeck's referrer.
  RunResult viaApi = run(K + " audit --no-cache --attach --sign-key " + key("ci.pem") + " " + front_->host() +
                         "/team/bundle:api");
  ASSERT_EQ(viaApi.code, 0) << viaApi.err;
  RunResult listed = run("curl -sf 'http://" + front_->host() + "/v2/team/bundle/referrers/" + digest("api").str() +
                         "?artifactType=application%2Fvnd.dev.sigstore.bundle.v0.3%2Bjson'");
  ASSERT_EQ(listed.code, 0);
  EXPECT_EQ(json::parse(listed.out)["manifests"].size(), 1u) << listed.out;
  RunResult api = gate("api", "", front_->host());
  EXPECT_EQ(api.code, 0) << api.out << api.err;
  RunResult apiReports = run(K + " reports --no-cache --json --key " + key("ci.pub") + " " + front_->host() +
                             "/team/bundle:api");
  json aj = parsed(apiReports);
  EXPECT_EQ(apiReports.code, 0) << apiReports.out;
  ASSERT_EQ(aj["reports"].size(), 1u) << apiReports.out;
  EXPECT_EQ(aj["reports"][0]["rewraps"].size(), 1u) << apiReports.out;

  // A newer signed fail, bundles only: the gate fails; then the older pass re-wrapped under a
  // new manifest claiming 2099, and re-encoded (the same envelope in other bundle bytes, a hint
  // naming the attacker's key): still the fail decides.
  ASSERT_EQ(attach("fail"), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(attach("fail", "-r " + key("req.txt")), 1);
  ASSERT_NO_FATAL_FAILURE(keepOnlyBundles("fail"));
  g = gate("fail");
  gj = parsed(g);
  EXPECT_EQ(g.code, 1) << g.out;
  EXPECT_EQ(countFindings(gj, "probe.report.failed"), 1) << g.out;
  std::vector<Listed> found = bundles("fail");
  ASSERT_EQ(found.size(), 2u);
  const Listed* pass = nullptr;
  for (const auto& f : found)
    if (json::parse(payloadOf(f.bundle))["predicate"]["verdict"] == "pass") pass = &f;
  ASSERT_NE(pass, nullptr);
  ASSERT_NO_FATAL_FAILURE(pushBundle("fail", pass->bundle, {{"org.opencontainers.image.created", "2099-01-01T00:00:00Z"}}));
  json reencoded = json::parse(pass->bundle);
  auto other = attest::Key::fromFile(key("other.pem"));
  ASSERT_TRUE(other.ok());
  reencoded["verificationMaterial"]["publicKey"]["hint"] = attest::publicKeyHint(*other);
  ASSERT_NO_FATAL_FAILURE(pushBundle("fail", reencoded.dump(2)));
  g = gate("fail");
  gj = parsed(g);
  EXPECT_EQ(g.code, 1) << g.out;
  EXPECT_EQ(countFindings(gj, "probe.report.failed"), 1) << g.out;
  r = reports("fail");
  j = parsed(r);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(j["newest"]["verdict"], "fail") << r.out;
  // The re-wrap and the re-encoding verified as the same statement: one report, two re-wraps.
  bool merged = false;
  for (const auto& e : j["reports"])
    if (e["verdict"] == "pass" && e.contains("rewraps") && e["rewraps"].size() == 2) merged = true;
  EXPECT_TRUE(merged) << r.out;
}

TEST_F(SigstoreBundle, BundleAttacksWithoutTheKeyFailClosed) {
  // A signed fail, bundles only; the attacker's bundles of a pass beside it.
  ASSERT_EQ(attach("copy", "-r " + key("req.txt")), 1);
  ASSERT_NO_FATAL_FAILURE(keepOnlyBundles("copy"));
  std::vector<Listed> found = bundles("copy");
  ASSERT_EQ(found.size(), 1u);
  json st = json::parse(payloadOf(found[0].bundle));
  st["predicate"]["verdict"] = "pass";
  st["predicate"]["findings"] = {{"info", 0}, {"warning", 0}, {"error", 0}};
  st["predicate"]["time"] = "2099-01-01T00:00:00.000Z";
  // Unsigned, and signed by the attacker's key (whose hint the bundle names).
  ASSERT_NO_FATAL_FAILURE(pushBundle("copy", bundleOf(st.dump(), "")));
  ASSERT_NO_FATAL_FAILURE(pushBundle("copy", bundleOf(st.dump(), "other.pem")));
  // The fail's own signature over a changed payload (the bytes moved, the signature kept).
  json forged = json::parse(found[0].bundle);
  st["predicate"]["time"] = "2098-01-01T00:00:00.000Z";
  forged["dsseEnvelope"]["payload"] = util::base64Encode(st.dump());
  ASSERT_NO_FATAL_FAILURE(pushBundle("copy", forged.dump()));
  RunResult g = gate("copy");
  json gj = parsed(g);
  EXPECT_EQ(g.code, 1) << g.out;
  EXPECT_EQ(countFindings(gj, "probe.report.failed"), 1) << g.out;
  EXPECT_EQ(countFindings(gj, "report.signature.missing"), 1) << g.out;
  EXPECT_EQ(countFindings(gj, "report.signature.invalid"), 2) << g.out;

  // A pass the CI signed on a host whose clock said 2099 (bundles only): not a pass.
  ASSERT_EQ(attach("future"), 0);
  ASSERT_NO_FATAL_FAILURE(keepOnlyBundles("future"));
  found = bundles("future");
  ASSERT_EQ(found.size(), 1u);
  json fst = json::parse(payloadOf(found[0].bundle));
  fst["predicate"]["time"] = "2099-01-01T00:00:00.000Z";
  ASSERT_NO_FATAL_FAILURE(pushBundle("future", bundleOf(fst.dump(), "ci.pem")));
  ASSERT_EQ(attach("future", "-r " + key("req.txt")), 1);
  ASSERT_NO_FATAL_FAILURE(keepOnlyBundles("future"));
  g = gate("future");
  gj = parsed(g);
  EXPECT_EQ(g.code, 1) << g.out;
  EXPECT_EQ(countFindings(gj, "report.time.future"), 1) << g.out;

  // An old pass (bundles only) past --max-age.
  ASSERT_EQ(attach("age"), 0);
  ASSERT_NO_FATAL_FAILURE(keepOnlyBundles("age"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  g = gate("age", "--max-age 2s");
  gj = parsed(g);
  EXPECT_EQ(g.code, 1) << g.out;
  EXPECT_EQ(countFindings(gj, "probe.report.expired"), 1) << g.out;
  EXPECT_EQ(gate("age", "--max-age 1d").code, 0);
}

// The repository rule of trust chain III (issue 49) holds for the bundle layout: the bundle's
// envelope goes through the same checks as Kernodeck's own.
TEST_F(SigstoreBundle, APassSignedForOneRepositoryDoesNotPassAnother) {
  // team/other holds the same image (same digest) as team/bundle:ivpol; the CI signed a pass for
  // team/bundle, and someone who can push to team/other wraps that bundle under it.
  ASSERT_EQ(digest("ivpol").str(), digest("ivpol", "team/other").str());
  ASSERT_EQ(attach("ivpol"), 0);
  std::vector<Listed> found = bundles("ivpol");
  ASSERT_EQ(found.size(), 1u);
  ASSERT_NO_FATAL_FAILURE(pushBundle("ivpol", found[0].bundle, {}, "team/other"));
  RunResult g = run(K + " gate --json --retries 0 --key " + key("ci.pub") + " --image " + reg_->host() +
                    "/team/other@" + digest("ivpol").str());
  json gj = parsed(g);
  EXPECT_EQ(g.code, 1) << g.out;
  EXPECT_EQ(gj["attached_report"]["met"], false) << g.out;
  EXPECT_EQ(gate("ivpol").code, 0);
}

TEST_F(SigstoreBundle, TheImageValidatingPolicyAdmitsOnlyAYoungUnsuppressedPassForItsRepository) {
  // The statements the binary signed: a pass, a fail, a pass with a suppressed error.
  ASSERT_EQ(attach("ivpol"), 0);
  ASSERT_EQ(attach("ivfail", "-r " + key("req.txt")), 1);
  ASSERT_EQ(attach("ivsup", "-r " + key("req.txt") + " --exceptions " + key("waive.yaml")), 0);
  auto statement = [&](const std::string& tag) {
    json newest;
    for (const auto& f : bundles(tag)) {
      json s = json::parse(payloadOf(f.bundle));
      if (newest.is_null() || s["predicate"]["time"] > newest["predicate"]["time"]) newest = s;
    }
    return newest;
  };
  json pass = statement("ivpol"), fail = statement("ivfail"), sup = statement("ivsup");
  ASSERT_EQ(pass["predicate"]["verdict"], "pass");
  ASSERT_EQ(fail["predicate"]["verdict"], "fail");
  ASSERT_EQ(sup["predicate"]["verdict"], "pass");
  ASSERT_GE(sup["predicate"]["exceptions"]["suppressed"]["error"].get<int>(), 1) << sup.dump();
  auto signedAt = *util::parseTimestampMs(pass["predicate"]["time"].get<std::string>());
  std::string now = util::utcTimestampMs(signedAt + 60000);
  std::string later = util::utcTimestampMs(signedAt + 31LL * 86400000);
  auto at = [&](const std::string& tag, const std::string& repo = "team/bundle") {
    return reg_->host() + "/" + repo + "@" + digest(tag).str();
  };
  json cases = json::array({
      {{"name", "pass"}, {"image", at("ivpol")}, {"now", now}, {"statement", pass}},
      {{"name", "fail"}, {"image", at("ivfail")}, {"now", now}, {"statement", fail}},
      {{"name", "old pass"}, {"image", at("ivpol")}, {"now", later}, {"statement", pass}},
      {{"name", "suppressed error"}, {"image", at("ivsup")}, {"now", now}, {"statement", sup}},
      {{"name", "another repository"}, {"image", at("ivpol", "team/other")}, {"now", now}, {"statement", pass}},
  });
  std::string policy = *dir_ + "/ivpol.json", input = *dir_ + "/ivpol-input.json";
  RunResult y = run("python3 -c 'import json,sys,yaml; json.dump(yaml.safe_load(open(sys.argv[1])), open(sys.argv[2], "
                    "\"w\"))' " + std::string(SOURCE_DIR) + "/container/k8s/admission/kyverno-ivpol.yaml " + policy);
  ASSERT_EQ(y.code, 0) << y.err;
  writeFile(input, json{{"policy", json::parse(readFile(policy))}, {"cases", cases}}.dump());
  RunResult r = run("KERNODECK_NPM_DIR=" + npmDir() + " node " + SOURCE_DIR + "/tests/container/kyverno_ivpol.js " + input);
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  EXPECT_EQ(out["schema"]["valid"], true) << out["schema"].dump();
  ASSERT_EQ(out["cases"].size(), 5u);
  for (const auto& c : out["cases"]) {
    EXPECT_EQ(c["admitted"], c["name"] == "pass") << c.dump();
    EXPECT_TRUE(c["errors"].empty()) << c.dump();
    if (c["name"] != "pass") {
      EXPECT_EQ(c["failed"].size(), 1u) << c.dump();
    }
  }
}

}  // namespace

}  // namespace integration_sigstore_bundle_test
