// cosign's attestation layout, where cosign, Kyverno's verifyImages and Sigstore's
// policy-controller look for attestations of an image (cosign's "legacy" format, written by
// `cosign attest` without the new bundle format): an image manifest under the tag
// `sha256-<hex of the subject>.att` in the subject's repository, whose every layer is one
// attestation, a DSSE envelope with media type application/vnd.dsse.envelope.v1+json and the
// annotations `predicateType` (the statement's) and `dev.cosignproject.cosign/signature` (empty:
// the signature is inside the envelope). Learnt from cosign's pkg/oci/static, pkg/oci/empty and
// cmd/cosign/cli/attest (v3.1); the code is ours.
//
// Writing keeps every layer already there (other tools' attestations) except earlier ones of
// the same predicate type, which the new one replaces, as `cosign attest --replace` does: the
// tag holds the newest Kernodeck report, not a growing history.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernodeck/registry/client.h"

namespace kernodeck::attest {

inline constexpr const char* kCosignSignatureAnnotation = "dev.cosignproject.cosign/signature";
inline constexpr const char* kCosignPredicateTypeAnnotation = "predicateType";

// "sha256-<hex>.att".
std::string cosignAttestationTag(const oci::Digest& subject);

// The attestation image after adding a layer: its manifest and config bytes.
struct CosignImage {
  std::string manifest;
  std::string config;
};

// Pure: the image under the tag once `layer` (a DSSE envelope, already a blob) of
// `predicateType` is added to `existing` (the manifest there now, or none). Corrupt when
// `existing` is not an image manifest (it is then not overwritten).
Result<CosignImage> mergeCosignAttestation(std::optional<std::string_view> existing, const oci::Descriptor& layer,
                                           const std::string& predicateType);

// Adds the envelope `envelope` of `predicateType` to the attestation image of `subject` (read,
// merge, write, read back; retried when a concurrent writer dropped it). Returns the manifest's
// digest.
Result<oci::Digest> pushCosignAttestation(registry::Client& c, const oci::Digest& subject, const std::string& envelope,
                                          const std::string& predicateType);

}  // namespace kernodeck::attest
