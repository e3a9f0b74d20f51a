// DSSE (Dead Simple Signing Envelope, secure-systems-lab/dsse v1): a payload, its type, and
// signatures over PAE(type, payload), so a signature can never be replayed for a payload of
// another type. Keys are PEM files read with OpenSSL: ECDSA P-256 (SHA-256, DER signatures)
// or Ed25519. A key id is the SHA-256 of the public key's DER SubjectPublicKeyInfo. In util
// because both the signed reports (attest) and the signed shared layer results (registry, below
// attest) use it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::util {

struct Signature {
  std::string keyid;  // hex; may be empty in envelopes signed by others
  std::string sig;    // raw signature bytes
};

struct Envelope {
  std::string payloadType;
  std::string payload;  // raw bytes (base64 on the wire)
  std::vector<Signature> signatures;
};

// DSSEv1 pre-authentication encoding: "DSSEv1 <len> <type> <len> <body>".
std::string pae(std::string_view payloadType, std::string_view payload);

std::string serializeEnvelope(const Envelope& e);
// Parses an envelope; Corrupt for anything that is not one (bad JSON, bad base64, missing fields).
Result<Envelope> parseEnvelope(std::string_view json);

// A key loaded from PEM: a private key signs and verifies, a public key only verifies.
class Key {
 public:
  ~Key();
  Key(Key&&) noexcept;
  Key& operator=(Key&&) noexcept;
  Key(const Key&) = delete;
  Key& operator=(const Key&) = delete;

  // Reads a PEM private key (PKCS#8, SEC1 "EC PRIVATE KEY") or public key; Unsupported for
  // a key that is neither ECDSA P-256 nor Ed25519.
  static Result<Key> fromPem(std::string_view pem, const std::string& what);
  static Result<Key> fromFile(const std::string& path);

  bool isPrivate() const { return private_; }
  const std::string& keyid() const { return keyid_; }
  const char* algorithm() const;  // "ecdsa-p256-sha256" or "ed25519"

  Result<std::string> sign(std::string_view message) const;
  bool verify(std::string_view message, std::string_view sig) const;

 private:
  Key() = default;
  struct Pkey;
  std::unique_ptr<Pkey> k_;
  bool private_ = false;
  bool ed25519_ = false;
  std::string keyid_;
};

// Signs `payload` into an envelope with one signature.
Result<Envelope> signEnvelope(std::string_view payloadType, std::string_view payload, const Key& key);

// Whether some signature of the envelope verifies under `key` (signatures whose keyid names
// another key are skipped). Errors say why not: no signatures, none by this key, none valid.
Status verifyEnvelope(const Envelope& e, const Key& key);

}  // namespace kernodeck::util
