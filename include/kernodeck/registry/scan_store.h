// A registry repository as the shared store of layer walk results (--cache-repo REGISTRY/REPO),
// as Trivy shares its layer cache keyed by layer and analyser version: each result is an OCI
// artifact (artifactType application/vnd.kernodeck.layer-scan.v1) tagged `<alg>-<hex>.v<N>`
// from the layer digest and Kernodeck's analysis version, holding the local cache's entry.
// Its manifest carries no time or worker name, so two workers that push the same layer at
// once push the same bytes: the writes are idempotent. A damaged or foreign entry (another
// layer's, a wrong type, a torn blob) is a miss, and the next walk's push replaces it.
#pragma once

#include <memory>
#include <string>

#include "kernodeck/oci/scan_cache.h"
#include "kernodeck/registry/client.h"

namespace kernodeck::registry {

inline constexpr const char* kLayerScanArtifactType = "application/vnd.kernodeck.layer-scan.v1";
inline constexpr const char* kLayerScanMediaType = "application/vnd.kernodeck.layer-scan.v1+tsv";

// The tag of a layer's result in the cache repository.
std::string scanTag(const oci::Digest& layer);

// Opens the store; Invalid for a reference that is not REGISTRY/REPO (no tag or digest).
Result<std::shared_ptr<oci::SharedScanStore>> openRegistryScanStore(const std::string& repo, const ClientOptions& opts);

}  // namespace kernodeck::registry
