// See scan_store.h.
#include "kernodeck/registry/scan_store.h"

#include <cstdio>
#include <mutex>

#include "kernodeck/registry/referrers.h"
#include "kernodeck/version.h"

namespace kernodeck::registry {

namespace {

class RegistryScanStore : public oci::SharedScanStore {
 public:
  RegistryScanStore(const Reference& ref, const ClientOptions& opts) : client_(ref, opts) {}

  std::optional<oci::LayerScan> load(const oci::Descriptor& layer) override {
    if (!layer.digest.verifiable()) return std::nullopt;
    auto a = fetchArtifact(client_, scanTag(layer.digest));
    if (!a.ok()) return std::nullopt;  // absent, or not an artifact at all: a miss
    auto ann = [&](const char* k) { return a->annotations.count(k) ? a->annotations.at(k) : std::string(); };
    if (a->artifactType != kLayerScanArtifactType || ann("dev.kernodeck.layer") != layer.digest.str() ||
        ann("dev.kernodeck.analysis-version") != std::to_string(kAnalysisVersion) || a->blobs.size() != 1 ||
        a->blobs[0].mediaType != kLayerScanMediaType)
      return std::nullopt;
    auto text = client_.smallBlob(a->blobs[0], 1ull << 30);
    if (!text.ok()) return std::nullopt;
    auto scan = oci::decodeScan(*text, layer.digest);
    if (!scan || static_cast<int64_t>(scan->compressedSize) != layer.size || scan->digestHex != layer.digest.encoded)
      return std::nullopt;
    return scan;
  }

  bool has(const oci::Descriptor& layer) override {
    auto a = fetchArtifact(client_, scanTag(layer.digest));
    return a.ok() && a->artifactType == kLayerScanArtifactType;
  }

  void store(const oci::Descriptor& layer, const oci::LayerScan& scan) override {
    if (!layer.digest.verifiable() || scan.error) return;
    Artifact a;
    a.artifactType = kLayerScanArtifactType;
    a.blobs.push_back({kLayerScanMediaType, oci::encodeScan(layer.digest, scan)});
    a.annotations = {{"dev.kernodeck.layer", layer.digest.str()},
                     {"dev.kernodeck.analysis-version", std::to_string(kAnalysisVersion)}};
    auto pushed = pushArtifact(client_, a, scanTag(layer.digest));
    // A cache: failing to share a result costs another worker a walk, not this audit its answer.
    if (!pushed.ok()) {
      std::lock_guard<std::mutex> l(warnMutex_);
      std::fprintf(stderr, "kernodeck: warning: cannot share the result of layer %s: %s\n", layer.digest.str().c_str(),
                   pushed.error().message.c_str());
    }
  }

 private:
  Client client_;
  std::mutex warnMutex_;
};

}  // namespace

std::string scanTag(const oci::Digest& layer) {
  return layer.algorithm + "-" + layer.encoded.substr(0, 64) + ".v" + std::to_string(kAnalysisVersion);
}

Result<std::shared_ptr<oci::SharedScanStore>> openRegistryScanStore(const std::string& repo,
                                                                    const ClientOptions& opts) {
  KDK_TRY_ASSIGN(Reference ref, parseReference(repo));
  if (ref.tagGiven || ref.digest)
    return Error::Invalid("--cache-repo takes REGISTRY/REPOSITORY without a tag or digest, not '" + repo + "'");
  if (repo.find('/') == std::string::npos || ref.registry == "docker.io")
    return Error::Invalid("--cache-repo needs an explicit registry: REGISTRY/REPOSITORY, not '" + repo + "'");
  return std::shared_ptr<oci::SharedScanStore>(new RegistryScanStore(ref, opts));
}

}  // namespace kernodeck::registry
