// The attestation `audit --attach --sign-key` writes where cosign looks (the `sha256-<hex>.att`
// tag), checked against Debian's docker-registry by tests/tools/cosign_lookup.js, a lookup
// written on @sigstore/core (npm) apart from Kernodeck: the layer verifies with the CI key and
// names the image; a forged layer (payload changed) and a signature by another key do not; an
// attestation another tool left under the tag is kept.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernodeck/registry/client.h"
#include "kernodeck/util/hash.h"
#include "local_registry.h"
#include "support.h"

namespace integration_cosign_layout_test {

using nlohmann::json;
using namespace kdktest;
using namespace kernodeck;

namespace {

const std::string K = KERNODECK_BIN;
const std::string kType = "https://kernodeck.dev/attestation/report/v3";

std::string npmDir() {
  const char* d = std::getenv("KERNODECK_NPM_DIR");
  return d && *d ? d : "/var/cache/kernodeck-test/npm";
}

class CosignLayout : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reg_ = new LocalRegistry;
    if (!reg_->start() || !haveTool("openssl") || !haveTool("node")) return;
    if (run("test -d " + npmDir() + "/node_modules/@sigstore/core").code != 0) return;
    dir_ = new std::string(tempDir("cosign-layout"));
    json entries = json::array({{{"path", "etc/os-release"}, {"content", "ID=cosign\n"}}});
    mkimage({{"tag", "1.0"}, {"layers", json::array({{{"entries", entries}}})}}, *dir_ + "/img");
    if (!reg_->push(*dir_ + "/img", "1.0", "team/signed:1.0")) return;
    if (!reg_->push(*dir_ + "/img", "1.0", "team/relabel:1.0")) return;
    std::string k = *dir_ + "/";
    ready_ =
        run("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " + k + "ci.pem && openssl pkey -in " +
            k + "ci.pem -pubout -out " + k + "ci.pub && openssl genpkey -algorithm ed25519 -out " + k +
            "other.pem && openssl pkey -in " + k + "other.pem -pubout -out " + k + "other.pub")
            .code == 0;
  }
  static void TearDownTestSuite() { delete reg_; }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "docker-registry, skopeo, openssl, node or @sigstore/core (npm) unavailable";
  }
  static std::string key(const std::string& name) { return *dir_ + "/" + name; }
  // The independent lookup: exit code and its JSON summary.
  static json lookup(const std::string& pub, int* code) {
    RunResult r = run("KERNODECK_NPM_DIR=" + npmDir() + " node " + SOURCE_DIR + "/tests/tools/cosign_lookup.js " +
                      reg_->host() + " team/signed 1.0 " + pub + " " + kType);
    *code = r.code;
    json j = json::parse(r.out, nullptr, false);
    if (!j.is_object()) ADD_FAILURE() << r.out << r.err;
    return j;
  }
  static registry::Client client(const std::string& repo = "team/signed") {
    return registry::Client(*registry::parseReference(reg_->host() + "/" + repo),
                            registry::ClientOptions{.noCache = true});
  }
  static std::string attTag(const std::string& repo = "team/signed") {
    std::string d = reg_->digestOf(repo + ":1.0");
    return "sha256-" + d.substr(7) + ".att";
  }
  // Writes MANIFEST (its layers' blobs already pushed) under the .att tag with a config listing them.
  static bool putAtt(json manifest, const std::string& repo = "team/signed") {
    auto c = client(repo);
    json diffIds = json::array();
    for (const auto& l : manifest["layers"]) diffIds.push_back(l["digest"]);
    std::string config =
        json{{"architecture", ""}, {"os", ""}, {"rootfs", {{"type", "layers"}, {"diff_ids", diffIds}}}}.dump();
    if (!c.pushBlob(config).ok()) return false;
    manifest["config"] = {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                          {"digest", "sha256:" + util::sha256Hex(config)},
                          {"size", config.size()}};
    return c.putManifest(attTag(repo), manifest.dump(), "application/vnd.oci.image.manifest.v1+json").ok();
  }
  static json attManifest(const std::string& repo = "team/signed") {
    auto m = client(repo).manifest(attTag(repo));
    return m.ok() ? json::parse(m->bytes, nullptr, false) : json();
  }
  // The in-toto statement inside each layer under REPO's .att tag, read from the payload as
  // cosign, Kyverno and policy-controller read it (the annotation plays no part); null for a
  // layer that holds none.
  static std::vector<json> attStatements(const std::string& repo) {
    std::vector<json> out;
    auto c = client(repo);
    json m = attManifest(repo);
    for (const auto& l : m["layers"]) {
      auto d = oci::parseDescriptor(l);
      auto blob = d.ok() ? c.smallBlob(*d, 1 << 24) : Result<std::string>(Error::Invalid("descriptor"));
      json env = blob.ok() ? json::parse(*blob, nullptr, false) : json();
      std::string payload;
      if (env.is_object() && env["payload"].is_string() && util::base64Decode(env["payload"].get<std::string>(), payload))
        out.push_back(json::parse(payload, nullptr, false));
      else
        out.push_back(json());
    }
    return out;
  }

  static LocalRegistry* reg_;
  static std::string* dir_;
  static bool ready_;
};

LocalRegistry* CosignLayout::reg_ = nullptr;
std::string* CosignLayout::dir_ = nullptr;
bool CosignLayout::ready_ = false;

TEST_F(CosignLayout, CosignsLookupFindsAndVerifiesTheReportAndKeepsOtherTools) {
  // Another tool's attestation is already under the tag (SLSA provenance, its own key).
  std::string theirs =
      R"({"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"keyid":"","sig":"AAAA"}]})";
  auto c = client();
  auto theirsDigest = c.pushBlob(theirs);
  ASSERT_TRUE(theirsDigest.ok());
  json slsaLayer = {
      {"mediaType", "application/vnd.dsse.envelope.v1+json"},
      {"digest", theirsDigest->str()},
      {"size", theirs.size()},
      {"annotations",
       {{"dev.cosignproject.cosign/signature", ""}, {"predicateType", "https://slsa.dev/provenance/v1"}}}};
  ASSERT_TRUE(putAtt({{"schemaVersion", 2},
                      {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                      {"layers", json::array({slsaLayer})}}));

  RunResult audit =
      run(K + " audit --no-cache --attach --sign-key " + key("ci.pem") + " " + reg_->host() + "/team/signed:1.0");
  ASSERT_EQ(audit.code, 0) << audit.err;
  EXPECT_NE(audit.err.find(attTag()), std::string::npos) << audit.err;

  int code = -1;
  json found = lookup(key("ci.pub"), &code);
  EXPECT_EQ(code, 0) << found.dump(1);
  EXPECT_EQ(found["verified"], 1) << found.dump(1);
  EXPECT_EQ(found["image_digest"], reg_->digestOf("team/signed:1.0"));
  ASSERT_EQ(found["layers"].size(), 2u) << found.dump(1);
  EXPECT_EQ(found["layers"][0]["digest"], theirsDigest->str());  // kept, first, and not ours
  EXPECT_EQ(found["layers"][0]["counts"], false);
  json ours = found["layers"][1];
  EXPECT_EQ(ours["predicateType"], kType);
  EXPECT_EQ(ours["predicate"]["verdict"], "pass");
  EXPECT_EQ(ours["predicate"]["fail_on"], "error");
  EXPECT_TRUE(ours["predicate"]["findings"].contains("error"));
  EXPECT_TRUE(ours["predicate"]["time"].is_string());
  EXPECT_TRUE(ours["predicate"]["kernodeck_version"].is_string());

  // Another key verifies nothing.
  json other = lookup(key("other.pub"), &code);
  EXPECT_EQ(code, 1) << other.dump(1);
  EXPECT_EQ(other["layers"][1]["why"], "no signature verifies with the key");

  // A second attach replaces our older layer and still keeps the other tool's.
  ASSERT_EQ(
      run(K + " audit --no-cache --attach --sign-key " + key("ci.pem") + " " + reg_->host() + "/team/signed:1.0").code,
      0);
  json twice = attManifest();
  ASSERT_EQ(twice["layers"].size(), 2u) << twice.dump(1);
  EXPECT_EQ(twice["layers"][0]["digest"], theirsDigest->str());
  EXPECT_NE(twice["layers"][1]["digest"], ours["digest"]);
  EXPECT_EQ(lookup(key("ci.pub"), &code)["verified"], 1);
  EXPECT_EQ(code, 0);

  // A forged layer: our envelope with its payload changed (verdict fail -> pass would be the
  // attack; any change will do), signatures kept. It alone under the tag verifies nothing.
  auto blob = c.smallBlob(oci::Descriptor{"application/vnd.dsse.envelope.v1+json",
                                          *oci::parseDigest(twice["layers"][1]["digest"].get<std::string>()),
                                          twice["layers"][1]["size"].get<int64_t>()},
                          1 << 24);
  ASSERT_TRUE(blob.ok());
  json env = json::parse(*blob);
  std::string payload;
  ASSERT_TRUE(util::base64Decode(env["payload"].get<std::string>(), payload));
  json statement = json::parse(payload);
  statement["predicate"]["findings"]["error"] = 0;
  statement["predicate"]["kernodeck_version"] = "9.9.9";
  env["payload"] = util::base64Encode(statement.dump());
  std::string forged = env.dump();
  auto forgedDigest = c.pushBlob(forged);
  ASSERT_TRUE(forgedDigest.ok());
  json forgedLayer = twice["layers"][1];
  forgedLayer["digest"] = forgedDigest->str();
  forgedLayer["size"] = forged.size();
  ASSERT_TRUE(putAtt({{"schemaVersion", 2},
                      {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                      {"layers", json::array({slsaLayer, forgedLayer})}}));
  json rejected = lookup(key("ci.pub"), &code);
  EXPECT_EQ(code, 1) << rejected.dump(1);
  EXPECT_EQ(rejected["verified"], 0);
  EXPECT_EQ(rejected["layers"][1]["why"], "no signature verifies with the key");
}

// Issue 39 §4: the attacker (push rights, no key) re-adds the image's old signed PASS under the
// .att tag labelled as another tool's predicate type; the CI's next attach is a FAIL. cosign,
// Kyverno and policy-controller pick statements by their payload, so a tag holding both would
// hold a signed pass and a signed fail. The attach judges layers by their payload: the old pass
// goes, the other tool's attestation stays, and the FAIL is the only Kernodeck statement.
TEST_F(CosignLayout, AnOldSignedPassRelabelledAsAnotherToolsIsReplacedByTheNextAttach) {
  const std::string repo = "team/relabel", img = reg_->host() + "/" + repo + ":1.0";
  RunResult pass = run(K + " audit --no-cache --attach --sign-key " + key("ci.pem") + " " + img);
  ASSERT_EQ(pass.code, 0) << pass.err;
  json first = attManifest(repo);
  ASSERT_EQ(first["layers"].size(), 1u) << first.dump(1);
  json oldPass = first["layers"][0];

  // Another tool's attestation, and the old signed PASS relabelled as SLSA provenance.
  std::string theirs =
      R"({"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"keyid":"","sig":"AAAA"}]})";
  auto theirsDigest = client(repo).pushBlob(theirs);
  ASSERT_TRUE(theirsDigest.ok());
  json slsa = {{"dev.cosignproject.cosign/signature", ""}, {"predicateType", "https://slsa.dev/provenance/v1"}};
  json relabelled = oldPass;
  relabelled["annotations"] = slsa;
  ASSERT_TRUE(putAtt({{"schemaVersion", 2},
                      {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                      {"layers", json::array({{{"mediaType", "application/vnd.dsse.envelope.v1+json"},
                                               {"digest", theirsDigest->str()},
                                               {"size", theirs.size()},
                                               {"annotations", slsa}},
                                              relabelled})}},
                     repo));

  // The next audit fails (--fail-on info) and is attached.
  RunResult fail = run(K + " audit --no-cache --fail-on info --attach --sign-key " + key("ci.pem") + " " + img);
  ASSERT_EQ(fail.code, 1) << fail.err;
  json after = attManifest(repo);
  std::vector<json> statements = attStatements(repo);
  ASSERT_EQ(statements.size(), after["layers"].size());
  std::vector<std::string> kernodeck;
  bool theirsKept = false;
  for (size_t i = 0; i < statements.size(); ++i) {
    theirsKept = theirsKept || after["layers"][i]["digest"] == theirsDigest->str();
    const json& st = statements[i];
    if (st.is_object() && st["predicateType"].is_string() &&
        st["predicateType"].get<std::string>().rfind("https://kernodeck.dev/attestation/report/", 0) == 0)
      kernodeck.push_back(st["predicate"]["verdict"].is_string() ? st["predicate"]["verdict"].get<std::string>() : "?");
  }
  EXPECT_EQ(kernodeck, std::vector<std::string>{"fail"}) << after.dump(1);
  EXPECT_TRUE(theirsKept) << after.dump(1);
  EXPECT_EQ(after["layers"].size(), 2u) << after.dump(1);
  for (const auto& l : after["layers"]) EXPECT_NE(l["digest"], oldPass["digest"]) << after.dump(1);
}

}  // namespace

}  // namespace integration_cosign_layout_test
