// See dsse.h. OpenSSL 3 EVP one-shot DigestSign/DigestVerify: SHA-256 for ECDSA, none for Ed25519.
#include "kernodeck/util/dsse.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <nlohmann/json.hpp>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/json_read.h"

namespace kernodeck::util {

using nlohmann::json;

std::string pae(std::string_view type, std::string_view body) {
  return "DSSEv1 " + std::to_string(type.size()) + " " + std::string(type) + " " + std::to_string(body.size()) + " " +
         std::string(body);
}

std::string serializeEnvelope(const Envelope& e) {
  json sigs = json::array();
  for (const auto& s : e.signatures) sigs.push_back({{"keyid", s.keyid}, {"sig", base64Encode(s.sig)}});
  return json{{"payloadType", e.payloadType}, {"payload", base64Encode(e.payload)}, {"signatures", sigs}}.dump();
}

Result<Envelope> parseEnvelope(std::string_view text) {
  json j = util::parseUntrustedJson(text);
  if (!j.is_object()) return Error::Corrupt("not a DSSE envelope: not a JSON object");
  if (!j.contains("payloadType") || !j["payloadType"].is_string() || !j.contains("payload") ||
      !j["payload"].is_string())
    return Error::Corrupt("not a DSSE envelope: payloadType and payload must be strings");
  Envelope e;
  e.payloadType = j["payloadType"].get<std::string>();
  if (!base64Decode(j["payload"].get<std::string>(), e.payload))
    return Error::Corrupt("DSSE envelope: the payload is not base64");
  if (j.contains("signatures")) {
    if (!j["signatures"].is_array()) return Error::Corrupt("DSSE envelope: signatures is not an array");
    for (const auto& s : j["signatures"]) {
      if (!s.is_object() || !s.contains("sig") || !s["sig"].is_string())
        return Error::Corrupt("DSSE envelope: a signature without a \"sig\" string");
      Signature sig;
      if (s.contains("keyid") && s["keyid"].is_string()) sig.keyid = s["keyid"].get<std::string>();
      if (!base64Decode(s["sig"].get<std::string>(), sig.sig))
        return Error::Corrupt("DSSE envelope: a signature is not base64");
      e.signatures.push_back(std::move(sig));
    }
  }
  return e;
}

struct Key::Pkey {
  EVP_PKEY* p = nullptr;
  ~Pkey() { EVP_PKEY_free(p); }
};

Key::~Key() = default;
Key::Key(Key&&) noexcept = default;
Key& Key::operator=(Key&&) noexcept = default;

const char* Key::algorithm() const { return ed25519_ ? "ed25519" : "ecdsa-p256-sha256"; }

Result<Key> Key::fromPem(std::string_view pem, const std::string& what) {
  Key k;
  k.k_ = std::make_unique<Pkey>();
  for (bool priv : {true, false}) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    if (!bio) return Error::Io(what + ": cannot allocate a buffer");
    k.k_->p = priv ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr)
                   : PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    k.private_ = priv;
    if (k.k_->p) break;
  }
  ERR_clear_error();
  if (!k.k_->p) return Error::Invalid(what + ": not a PEM private or public key (encrypted keys are not supported)");
  int id = EVP_PKEY_get_base_id(k.k_->p);
  if (id == EVP_PKEY_ED25519) {
    k.ed25519_ = true;
  } else if (id == EVP_PKEY_EC) {
    char group[64] = {0};
    size_t len = 0;
    if (!EVP_PKEY_get_group_name(k.k_->p, group, sizeof group, &len) || std::string(group) != "prime256v1")
      return Error::Unsupported(what + ": an EC key on curve '" + group +
                                "'; Kernodeck signs with P-256 (prime256v1) or Ed25519");
  } else {
    return Error::Unsupported(what + ": a " +
                              std::string(EVP_PKEY_get0_type_name(k.k_->p) ? EVP_PKEY_get0_type_name(k.k_->p) : "?") +
                              " key; Kernodeck signs with ECDSA P-256 or Ed25519");
  }
  unsigned char* der = nullptr;
  int n = i2d_PUBKEY(k.k_->p, &der);
  if (n <= 0) return Error::Invalid(what + ": cannot encode its public key");
  k.keyid_ = sha256Hex(std::string_view(reinterpret_cast<const char*>(der), static_cast<size_t>(n)));
  OPENSSL_free(der);
  return k;
}

Result<Key> Key::fromFile(const std::string& path) {
  auto text = readFileLimited(path, 64 * 1024);
  if (!text.ok()) return Error::Io("key " + path + ": " + text.error().message);
  return fromPem(*text, "key " + path);
}

Result<std::string> Key::sign(std::string_view message) const {
  if (!private_) return Error::Invalid("signing needs a private key; this is a public key");
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::string sig;
  size_t len = 0;
  bool ok =
      ctx && EVP_DigestSignInit(ctx, nullptr, ed25519_ ? nullptr : EVP_sha256(), nullptr, k_->p) == 1 &&
      EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  if (ok) {
    sig.resize(len);
    ok = EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                        reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
    sig.resize(len);
  }
  EVP_MD_CTX_free(ctx);
  if (!ok) return Error::Io(std::string("signing with the ") + algorithm() + " key failed");
  return sig;
}

bool Key::verify(std::string_view message, std::string_view sig) const {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx && EVP_DigestVerifyInit(ctx, nullptr, ed25519_ ? nullptr : EVP_sha256(), nullptr, k_->p) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                             reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

Result<Envelope> signEnvelope(std::string_view payloadType, std::string_view payload, const Key& key) {
  Envelope e{std::string(payloadType), std::string(payload), {}};
  KDK_TRY_ASSIGN(std::string sig, key.sign(pae(payloadType, payload)));
  e.signatures.push_back({key.keyid(), std::move(sig)});
  return e;
}

Status verifyEnvelope(const Envelope& e, const Key& key) {
  if (e.signatures.empty()) return Error::Signature("the envelope is not signed");
  std::string message = pae(e.payloadType, e.payload);
  bool tried = false;
  for (const auto& s : e.signatures) {
    if (!s.keyid.empty() && s.keyid != key.keyid()) continue;
    tried = true;
    if (key.verify(message, s.sig)) return {};
  }
  if (!tried)
    return Error::Signature("no signature by key " + key.keyid().substr(0, 16) + " (signed by " +
                            e.signatures.front().keyid.substr(0, 16) + ")");
  return Error::Signature("the signature by key " + key.keyid().substr(0, 16) + " does not verify");
}

}  // namespace kernodeck::util
