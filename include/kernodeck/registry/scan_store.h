// A registry repository as the shared store of layer walk results (--cache-repo REGISTRY/REPO),
// as Trivy shares its layer cache keyed by layer and analyser version: each result is an OCI
// artifact (artifactType application/vnd.kernodeck.layer-scan.v1) tagged `<alg>-<hex>.v<N>`
// from the layer digest and Kernodeck's analysis version, holding the local cache's entry and
// a DSSE envelope (the keys of signed reports) over a statement naming the layer digest and
// size, the analysis version, the scan options and the digest of the entry. Anyone who can push
// to the repository can write an entry, so an entry counts only when that envelope verifies
// under a key the reader trusts and the statement matches what the reader would walk; anything
// else (unsigned, another key, other options, another layer, a torn blob) is a miss with its
// reason, and the next signed walk's push replaces it. The manifest carries no time or worker
// name: two workers that push the same layer at once push complete entries (the same bytes
// with an Ed25519 key, whose signatures are deterministic).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernodeck/oci/scan_cache.h"
#include "kernodeck/registry/client.h"
#include "kernodeck/util/dsse.h"

namespace kernodeck::registry {

inline constexpr const char* kLayerScanArtifactType = "application/vnd.kernodeck.layer-scan.v1";
inline constexpr const char* kLayerScanMediaType = "application/vnd.kernodeck.layer-scan.v1+tsv";
inline constexpr const char* kDsseEnvelopeMediaType = "application/vnd.dsse.envelope.v1+json";
// The DSSE payload type of a layer result's signed statement.
inline constexpr const char* kLayerScanStatementType = "application/vnd.kernodeck.layer-scan.statement.v1+json";

// Which shared results count, and how this store signs what it shares. The keys are the
// caller's and must outlive the store.
struct ScanTrust {
  std::vector<const util::Key*> trusted;  // results signed by one of these count (--cache-key)
  const util::Key* signer = nullptr;      // a private key: what this store shares is signed; none: nothing is shared
};

// The tag of a layer's result in the cache repository.
std::string scanTag(const oci::Digest& layer);

// Opens the store; Invalid for a reference that is not REGISTRY/REPO (no tag or digest).
Result<std::shared_ptr<oci::SharedScanStore>> openRegistryScanStore(const std::string& repo, const ClientOptions& opts,
                                                                    ScanTrust trust = {});

}  // namespace kernodeck::registry
