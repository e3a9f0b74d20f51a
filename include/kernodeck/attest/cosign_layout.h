// cosign's attestation layout, where cosign, Kyverno's verifyImages and Sigstore's
// policy-controller look for attestations of an image (cosign's "legacy" format, written by
// `cosign attest` without the new bundle format): an image manifest under the tag
// `sha256-<hex of the subject>.att` in the subject's repository, whose every layer is one
// attestation, a DSSE envelope with media type application/vnd.dsse.envelope.v1+json and the
// annotations `predicateType` (the statement's) and `dev.cosignproject.cosign/signature` (empty:
// the signature is inside the envelope). Learnt from cosign's pkg/oci/static, pkg/oci/empty and
// cmd/cosign/cli/attest (v3.1); the code is ours.
//
// Writing keeps every layer already there (other tools' attestations) except Kernodeck
// statements, which the new one replaces, as `cosign attest --replace` does: the tag holds the
// newest Kernodeck report, not a growing history. A layer is judged by its payload (the in-toto
// statement's predicateType), signed or not, never by its `predicateType` annotation: whoever
// can push may re-add an old signed pass labelled as another tool's, and it is replaced too.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "kernodeck/registry/client.h"

namespace kernodeck::attest {

inline constexpr const char* kCosignSignatureAnnotation = "dev.cosignproject.cosign/signature";
inline constexpr const char* kCosignPredicateTypeAnnotation = "predicateType";

// Kernodeck's report predicate types, every version: https://kernodeck.dev/attestation/report/vN.
inline constexpr const char* kKernodeckPredicateTypePrefix = "https://kernodeck.dev/attestation/report/";
// The most bytes of an existing layer read to judge it (what a report envelope may be), and of
// all the layers of one attach together (whoever can push may list any number).
inline constexpr uint64_t kMaxJudgedLayerBytes = 64u << 20;
inline constexpr uint64_t kMaxJudgedBytes = 512u << 20;

// Whether a layer's bytes are a DSSE envelope whose payload is an in-toto statement of a
// Kernodeck report predicate type, signed or not, whatever it names as its subject (under an
// image's tag, a Kernodeck statement about another image verifies for no one and is ours to
// clear). Annotations play no part.
bool isKernodeckStatement(std::string_view layerBytes);

// "sha256-<hex>.att".
std::string cosignAttestationTag(const oci::Digest& subject);

// The attestation image after adding a layer: its manifest and config bytes.
struct CosignImage {
  std::string manifest;
  std::string config;
};

// Pure: the image under the tag once `layer` (a DSSE envelope, already a blob) of
// `predicateType` is added to `existing` (the manifest there now, or none), without the layers
// whose digests are in `replaced` (those isKernodeckStatement judged ours). Corrupt when
// `existing` is not an image manifest (it is then not overwritten).
Result<CosignImage> mergeCosignAttestation(std::optional<std::string_view> existing, const oci::Descriptor& layer,
                                           const std::string& predicateType,
                                           const std::set<std::string>& replaced = {});

// Adds the envelope `envelope` of `predicateType` to the attestation image of `subject` (read,
// judge each layer there by its payload, read whole up to kMaxJudgedLayerBytes and
// kMaxJudgedBytes in all, merge, write, read back; retried when a concurrent writer dropped
// it). A layer past the bounds or that cannot be read is kept. `replaces` false (an unsigned
// envelope): no layer is replaced, so an unsigned attach never removes a signed statement.
// Returns the manifest's digest.
Result<oci::Digest> pushCosignAttestation(registry::Client& c, const oci::Digest& subject, const std::string& envelope,
                                          const std::string& predicateType, bool replaces = true);

}  // namespace kernodeck::attest
