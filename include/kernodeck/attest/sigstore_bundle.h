// Sigstore bundles (protobuf-specs' Bundle v0.3, JSON as protojson writes it), the layout cosign 3
// writes attestations in by default (`--new-bundle-format`): the bundle, a DSSE envelope with
// its verification material, is the single layer of an OCI 1.1 referrer whose artifactType and
// layer media type are application/vnd.dev.sigstore.bundle.v0.3+json, config the empty
// descriptor, annotated `dev.sigstore.bundle.content: dsse-envelope` and
// `dev.sigstore.bundle.predicateType: <type>` (cosign's specs/BUNDLE_SPEC.md and
// pkg/oci/remote/write.go, WriteAttestationNewBundleFormat; sigstore-go's pkg/sign for the
// bundle). A key-signed bundle written with `--tlog-upload=false` carries only the public key's
// hint (base64 of the SHA-256 of its DER SubjectPublicKeyInfo, as cosign's
// internal/key/svkeypair.go and sigstore-go's pkg/sign/keys.go compute it): no key, no
// certificate, no transparency-log entry, no timestamp. Learnt from those sources; the code is ours.
//
// Reading takes only the DSSE envelope out of a bundle: its verification material is never used
// (the reader verifies with the configured key only: cosign's GHSA-fx35-mq7g-6g98 trusted key
// material found beside the signature). The envelope then goes through the same checks as the
// envelope of Kernodeck's own referrer (attached_report.h).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "kernodeck/attest/dsse.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/util/result.h"

namespace kernodeck::attest {

// The bundle's media type, the referrer's artifactType and its layer's media type.
inline constexpr const char* kSigstoreBundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json";
// The spelling of the same version in earlier bundles' mediaType field (protobuf-specs accepts both).
inline constexpr const char* kSigstoreBundleMediaTypeAlt = "application/vnd.dev.sigstore.bundle+json;version=0.3";
inline constexpr const char* kBundleContentAnnotation = "dev.sigstore.bundle.content";
inline constexpr const char* kBundlePredicateTypeAnnotation = "dev.sigstore.bundle.predicateType";

// cosign's and sigstore-go's hint of a public key: standard base64 of the SHA-256 of its DER
// SubjectPublicKeyInfo (the same hash as Key::keyid(), which is its hex).
std::string publicKeyHint(const Key& key);

// The bundle JSON of a signed envelope (exactly one signature), as sigstore-go's protojson writes
// it: mediaType, verificationMaterial.publicKey.hint, dsseEnvelope {payload, payloadType,
// signatures [{sig}]} (cosign writes no keyid in the bundle's signature). Invalid for an
// unsigned envelope.
Result<std::string> makeSigstoreBundle(const Envelope& signedEnvelope, const Key& key);

// The referrer manifest's annotations cosign writes for an attestation bundle: created (RFC 3339,
// seconds, as Go's time.RFC3339), content `dsse-envelope` and the predicate type.
std::map<std::string, std::string> bundleAnnotations(const std::string& predicateType, int64_t nowMs);

// The DSSE envelope inside a bundle's bytes (which the caller has bounded and digest-checked),
// as an envelope document parseEnvelope reads. Corrupt when the bytes are not a v0.3 bundle
// holding a DSSE envelope (a message signature, another version). Nothing but the envelope is
// taken: the verification material is ignored, whatever key, certificate or log entry it holds.
Result<std::string> bundleEnvelope(std::string_view bundleBytes);

// The referrer cosign 3 writes for a bundle: artifactType and the single layer's media type the
// bundle's, the empty config (its descriptor also naming the artifactType, as cosign's does),
// `subject` the attested manifest, bundleAnnotations(). As registry::artifactManifest writes it.
registry::Artifact bundleArtifact(std::string bundle, const oci::Descriptor& subject, const std::string& predicateType,
                                  int64_t nowMs);

// Signs nothing: wraps the signed `envelope` in a bundle and pushes its referrer (the fallback
// index kept where the registry has no referrers API). Returns the referrer's descriptor.
Result<oci::Descriptor> pushSigstoreBundle(registry::Client& c, const oci::Descriptor& subject, const Envelope& envelope,
                                           const Key& key, const std::string& predicateType);

}  // namespace kernodeck::attest
