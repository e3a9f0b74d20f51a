// DSSE envelopes and in-toto Statements: the PAE of the spec, signing and verifying with
// ECDSA P-256 and Ed25519 keys made here, and every way a signature must fail.
#include "kernodeck/attest/dsse.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "kernodeck/attest/predicate.h"
#include "kernodeck/attest/statement.h"

namespace attest_dsse_test {

using namespace kernodeck;
using namespace kernodeck::attest;

namespace {

// A key as PEM: the private key (PKCS#8) or its public half.
std::string pemOf(EVP_PKEY* k, bool pub) {
  BIO* b = BIO_new(BIO_s_mem());
  if (pub)
    PEM_write_bio_PUBKEY(b, k);
  else
    PEM_write_bio_PrivateKey(b, k, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(b);
  return out;
}

// A fresh private key as PEM: EC on `curve`, ED25519, or RSA.
std::string makeKey(const char* type, const char* curve, bool pub) {
  EVP_PKEY* k = std::string(type) == "RSA" ? EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048})
                : curve                    ? EVP_PKEY_Q_keygen(nullptr, nullptr, type, curve)
                                           : EVP_PKEY_Q_keygen(nullptr, nullptr, type);
  std::string out = pemOf(k, pub);
  EVP_PKEY_free(k);
  return out;
}

// The public half of a PEM private key.
std::string publicOf(const std::string& priv) {
  BIO* in = BIO_new_mem_buf(priv.data(), static_cast<int>(priv.size()));
  EVP_PKEY* k = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  BIO_free(in);
  std::string out = pemOf(k, true);
  EVP_PKEY_free(k);
  return out;
}

TEST(Dsse, PaeMatchesTheSpecExample) {
  EXPECT_EQ(pae("http://example.com/HelloWorld", "hello world"),
            "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  EXPECT_EQ(pae("", ""), "DSSEv1 0  0 ");
}

struct KeyCase {
  const char* name;
  const char* type;
  const char* curve;
};

class DsseKeys : public ::testing::TestWithParam<KeyCase> {};

TEST_P(DsseKeys, SignsAndVerifiesAndRejectsEveryTamper) {
  std::string priv = makeKey(GetParam().type, GetParam().curve, false);
  auto signer = Key::fromPem(priv, "test key");
  ASSERT_TRUE(signer.ok()) << signer.error().message;
  EXPECT_TRUE(signer->isPrivate());
  auto verifier = Key::fromPem(publicOf(priv), "test public key");
  ASSERT_TRUE(verifier.ok()) << verifier.error().message;
  EXPECT_FALSE(verifier->isPrivate());
  EXPECT_EQ(signer->keyid(), verifier->keyid());
  EXPECT_EQ(signer->keyid().size(), 64u);

  auto env = signEnvelope(kInTotoPayloadType, R"({"a":1})", *signer);
  ASSERT_TRUE(env.ok());
  auto back = parseEnvelope(serializeEnvelope(*env));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->payload, R"({"a":1})");
  EXPECT_TRUE(verifyEnvelope(*back, *verifier).ok());
  EXPECT_TRUE(verifyEnvelope(*back, *signer).ok());
  EXPECT_FALSE(verifier->sign("x").ok());  // a public key cannot sign

  Envelope payload = *back;
  payload.payload = R"({"a":2})";
  EXPECT_FALSE(verifyEnvelope(payload, *verifier).ok());
  Envelope type = *back;
  type.payloadType = "text/plain";
  EXPECT_FALSE(verifyEnvelope(type, *verifier).ok());
  Envelope sig = *back;
  sig.signatures[0].sig[sig.signatures[0].sig.size() / 2] ^= 1;
  EXPECT_FALSE(verifyEnvelope(sig, *verifier).ok());
  Envelope none = *back;
  none.signatures.clear();
  auto v = verifyEnvelope(none, *verifier);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("not signed"), std::string::npos);

  auto other = Key::fromPem(makeKey(GetParam().type, GetParam().curve, false), "other key");
  ASSERT_TRUE(other.ok());
  v = verifyEnvelope(*back, *other);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("no signature by key"), std::string::npos);
  Envelope anonymous = *back;  // no keyid: every key is tried, and this one fails
  anonymous.signatures[0].keyid.clear();
  EXPECT_FALSE(verifyEnvelope(anonymous, *other).ok());
  EXPECT_TRUE(verifyEnvelope(anonymous, *verifier).ok());
}

INSTANTIATE_TEST_SUITE_P(Algorithms, DsseKeys,
                         ::testing::Values(KeyCase{"P256", "EC", "P-256"}, KeyCase{"Ed25519", "ED25519", nullptr}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Dsse, RefusesOtherKeysAndGarbage) {
  auto p384 = Key::fromPem(makeKey("EC", "P-384", false), "k");
  ASSERT_FALSE(p384.ok());
  EXPECT_TRUE(p384.error().is(ErrorKind::Unsupported));
  auto rsa = Key::fromPem(makeKey("RSA", nullptr, false), "k");
  ASSERT_FALSE(rsa.ok());
  EXPECT_TRUE(rsa.error().is(ErrorKind::Unsupported));
  EXPECT_FALSE(Key::fromPem("not a key", "k").ok());
  EXPECT_FALSE(Key::fromFile("/nonexistent/key.pem").ok());
}

TEST(Dsse, ParseRefusesMalformedEnvelopes) {
  for (const char* bad :
       {"", "[]", "{}", R"({"payloadType":"t"})", R"({"payloadType":"t","payload":"!!"})",
        R"({"payloadType":"t","payload":"","signatures":{}})",
        R"({"payloadType":"t","payload":"","signatures":[{"keyid":"x"}]})",
        R"({"payloadType":"t","payload":"e30=","signatures":[{"sig":"%%"}]})", R"({"payloadType":"t","payl)"}) {
    auto e = parseEnvelope(bad);
    EXPECT_FALSE(e.ok()) << bad;
    if (!e.ok()) {
      EXPECT_TRUE(e.error().is(ErrorKind::Corrupt)) << bad;
    }
  }
}

TEST(Statement, RoundTripsAndRefusesWrongShapes) {
  Statement s;
  s.subjects.push_back({"localhost/team/app", {{"sha256", std::string(64, 'a')}}});
  s.predicateType = kReportPredicateType;
  s.predicate = {{"schema", "kernodeck.report/v1"}};
  auto back = parseStatement(serializeStatement(s));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->subjects.at(0).digest.at("sha256"), std::string(64, 'a'));
  EXPECT_EQ(back->predicate["schema"], "kernodeck.report/v1");
  for (const char* bad :
       {"{}",
        R"({"_type":"https://in-toto.io/Statement/v0.1","subject":[{"digest":{"sha256":"a"}}],"predicateType":"p"})",
        R"({"_type":"https://in-toto.io/Statement/v1","subject":[],"predicateType":"p"})",
        R"({"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"x"}],"predicateType":"p"})",
        R"({"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":"a"}}]})"})
    EXPECT_FALSE(parseStatement(bad).ok()) << bad;
}

}  // namespace

}  // namespace attest_dsse_test
