// Sigstore bundles (attest/sigstore_bundle.h): the hint as cosign computes it, the bundle's shape
// as sigstore-go writes it, and the reader taking only the DSSE envelope out of a bundle
// (whatever its verification material says), refusing anything else. Sigstore's own verifier
// judges the bundles the binary attaches in tests/integration/sigstore_bundle_test.cc.
#include "kernodeck/attest/sigstore_bundle.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kernodeck/registry/referrers.h"

namespace attest_sigstore_bundle_test {

namespace {

using nlohmann::json;
using namespace kernodeck;
using namespace kernodeck::attest;

// An Ed25519 key and its hint as `openssl pkey -pubout -outform DER | openssl dgst -sha256 -binary
// | base64` printed it.
const char* kPem =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIFyXY4cMjPS9LGRsA5aN77Bm2nG1lRX2YcF4nHzicDfs\n"
    "-----END PRIVATE KEY-----\n";
const char* kHint = "E6a8i7F6J9zJFvVrrAsRrN6mskCH8cuzutWAvNOaNLM=";

TEST(SigstoreBundle, HintIsTheBase64Sha256OfTheDerPublicKey) {
  auto k = Key::fromPem(kPem, "test key");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(publicKeyHint(*k), kHint);
}

TEST(SigstoreBundle, WritesSigstoreGosShapeAndReadsBackOnlyTheEnvelope) {
  auto k = Key::fromPem(kPem, "test key");
  ASSERT_TRUE(k.ok());
  auto env = signEnvelope("application/vnd.in-toto+json", R"({"_type":"x"})", *k);
  ASSERT_TRUE(env.ok());
  auto bundle = makeSigstoreBundle(*env, *k);
  ASSERT_TRUE(bundle.ok());
  json b = json::parse(*bundle);
  EXPECT_EQ(b["mediaType"], kSigstoreBundleMediaType);
  EXPECT_EQ(b["verificationMaterial"], json({{"publicKey", {{"hint", kHint}}}}));
  EXPECT_EQ(b["dsseEnvelope"]["payloadType"], "application/vnd.in-toto+json");
  ASSERT_EQ(b["dsseEnvelope"]["signatures"].size(), 1u);
  EXPECT_FALSE(b["dsseEnvelope"]["signatures"][0].contains("keyid"));  // cosign writes none
  // protojson's order: mediaType, verificationMaterial, dsseEnvelope.
  EXPECT_LT(bundle->find("mediaType"), bundle->find("verificationMaterial"));
  EXPECT_LT(bundle->find("verificationMaterial"), bundle->find("dsseEnvelope"));

  auto inner = bundleEnvelope(*bundle);
  ASSERT_TRUE(inner.ok()) << inner.error().message;
  auto back = parseEnvelope(*inner);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->payload, env->payload);
  EXPECT_TRUE(verifyEnvelope(*back, *k).ok());
  // Key material in the bundle plays no part: a bundle naming a certificate and a public key
  // yields the same envelope, and only the configured key verifies it.
  b["verificationMaterial"] = {{"certificate", {{"rawBytes", "AAAA"}}}, {"publicKey", {{"hint", "x"}}}};
  auto same = bundleEnvelope(b.dump());
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(json::parse(*same), json::parse(*inner));
  // The other spelling of v0.3 is read too.
  b["mediaType"] = kSigstoreBundleMediaTypeAlt;
  EXPECT_TRUE(bundleEnvelope(b.dump()).ok());
  EXPECT_FALSE(makeSigstoreBundle(Envelope{"t", "p", {}}, *k).ok());
}

TEST(SigstoreBundle, RefusesWhatIsNotAV03DsseBundle) {
  for (const char* bad : {
           "", "[]", "not json", R"({"mediaType":"application/vnd.dev.sigstore.bundle+json;version=0.1"})",
           R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"})",
           R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","messageSignature":{},"dsseEnvelope":{}})",
           R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","dsseEnvelope":[]})",
           R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","dsseEnvelope":{"payload":"e30=","payloadType":"t","signatures":{}}})",
       }) {
    auto r = bundleEnvelope(bad);
    EXPECT_FALSE(r.ok() && parseEnvelope(*r).ok()) << bad;
  }
}

TEST(SigstoreBundle, TheReferrerIsCosign3s) {
  oci::Descriptor subject{"application/vnd.oci.image.manifest.v1+json",
                          oci::Digest{"sha256", std::string(64, 'a')}, 1234};
  registry::Artifact a = bundleArtifact("{}", subject, "https://kernodeck.dev/attestation/report/v3",
                                        1764856800123);  // 2025-12-04T14:00:00.123Z
  json m = json::parse(registry::artifactManifest(a));
  EXPECT_EQ(m["artifactType"], kSigstoreBundleMediaType);
  EXPECT_EQ(m["config"]["mediaType"], "application/vnd.oci.empty.v1+json");
  EXPECT_EQ(m["config"]["artifactType"], kSigstoreBundleMediaType);
  EXPECT_EQ(m["config"]["size"], 2);
  ASSERT_EQ(m["layers"].size(), 1u);
  EXPECT_EQ(m["layers"][0]["mediaType"], kSigstoreBundleMediaType);
  EXPECT_EQ(m["annotations"],
            json({{"dev.sigstore.bundle.content", "dsse-envelope"},
                  {"dev.sigstore.bundle.predicateType", "https://kernodeck.dev/attestation/report/v3"},
                  {"org.opencontainers.image.created", "2025-12-04T14:00:00Z"}}));
  EXPECT_EQ(m["subject"]["digest"], subject.digest.str());
}

}  // namespace

}  // namespace attest_sigstore_bundle_test
