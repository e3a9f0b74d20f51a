// See scan_store.h. Reading an entry checks, in order: the artifact's type and annotations,
// the DSSE envelope's signature under a trusted key, the signed statement (layer, size,
// analysis version, options, the scan blob's digest), then the scan blob against that digest.
// Each refusal is a reason string the audit turns into a cache.shared.ignored finding.
#include "kernodeck/registry/scan_store.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include <nlohmann/json.hpp>

#include "kernodeck/registry/referrers.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/version.h"

namespace kernodeck::registry {

using nlohmann::json;

namespace {

constexpr const char* kStatementType = "kernodeck.layer-scan/v1";
constexpr uint64_t kMaxEnvelopeBytes = 64 * 1024;

// The statement an entry's envelope signs: what the scan is of and how it was made, and the
// digest of the scan's bytes, so the signature covers them without holding them.
std::string statementFor(const oci::Descriptor& layer, const oci::ScanOptions& opts, const std::string& scanText) {
  return json{{"_type", kStatementType},
              {"layer", {{"digest", layer.digest.str()}, {"size", layer.size}}},
              {"analysis_version", kAnalysisVersion},
              {"options", oci::scanOptionsJson(opts)},
              {"scan", {{"digest", "sha256:" + util::sha256Hex(scanText)}, {"size", scanText.size()}}}}
      .dump();
}

class RegistryScanStore : public oci::SharedScanStore {
 public:
  RegistryScanStore(const Reference& ref, const ClientOptions& opts, ScanTrust trust)
      : client_(ref, opts), trust_(std::move(trust)) {}

  oci::SharedScan load(const oci::Descriptor& layer, const oci::ScanOptions& opts) override {
    oci::SharedScan out;
    std::optional<oci::Descriptor> scanBlob = check(layer, opts, out);
    if (!scanBlob) return out;
    auto text = client_.smallBlob(*scanBlob, 1ull << 30);  // verified against the signed digest
    if (!text.ok()) {
      out.ignored = "its scan cannot be read: " + text.error().message;
      return out;
    }
    auto scan = oci::decodeScan(*text, layer.digest);
    if (!scan || static_cast<int64_t>(scan->compressedSize) != layer.size || scan->digestHex != layer.digest.encoded) {
      out.ignored = "its scan is damaged or of another layer";
      return out;
    }
    out.scan = std::move(scan);
    return out;
  }

  bool has(const oci::Descriptor& layer, const oci::ScanOptions& opts) override {
    oci::SharedScan out;
    return check(layer, opts, out).has_value();
  }

  void store(const oci::Descriptor& layer, const oci::ScanOptions& opts, const oci::LayerScan& scan) override {
    // Unsigned, a result would be ignored by every reader and would replace a signed one.
    if (!trust_.signer || !layer.digest.verifiable() || scan.error) return;
    std::string text = oci::encodeScan(layer.digest, scan);
    auto envelope = util::signEnvelope(kLayerScanStatementType, statementFor(layer, opts, text), *trust_.signer);
    Artifact a;
    a.artifactType = kLayerScanArtifactType;
    a.blobs.push_back({kLayerScanMediaType, std::move(text)});
    if (envelope.ok()) a.blobs.push_back({kDsseEnvelopeMediaType, util::serializeEnvelope(*envelope)});
    a.annotations = {{"dev.kernodeck.layer", layer.digest.str()},
                     {"dev.kernodeck.analysis-version", std::to_string(kAnalysisVersion)}};
    auto pushed =
        envelope.ok() ? pushArtifact(client_, a, scanTag(layer.digest)) : Result<oci::Descriptor>(envelope.error());
    // A cache: failing to share a result costs another worker a walk, not this audit its answer.
    if (!pushed.ok()) {
      std::lock_guard<std::mutex> l(warnMutex_);
      std::fprintf(stderr, "kernodeck: warning: cannot share the result of layer %s: %s\n", layer.digest.str().c_str(),
                   pushed.error().message.c_str());
    }
  }

  std::string trustId() const override {
    std::vector<std::string> ids;
    for (const util::Key* k : trust_.trusted) ids.push_back(k->keyid());
    std::sort(ids.begin(), ids.end());
    std::string out = client_.reference().registry + "/" + client_.reference().repository + " keys";
    for (const auto& id : ids) out += " " + id;
    return out;
  }

 private:
  // Checks the entry of `layer` up to its signed statement; the scan blob's descriptor when
  // this reader may use it, else nullopt with out.entry and out.ignored filled (ignored stays
  // empty when there is no entry).
  std::optional<oci::Descriptor> check(const oci::Descriptor& layer, const oci::ScanOptions& opts,
                                       oci::SharedScan& out) {
    if (!layer.digest.verifiable()) return std::nullopt;
    std::string tag = scanTag(layer.digest);
    out.entry = client_.reference().registry + "/" + client_.reference().repository + ":" + tag;
    auto a = fetchArtifact(client_, tag);
    if (!a.ok()) {
      if (!a.error().is(ErrorKind::NotFound)) out.ignored = "it cannot be read: " + a.error().message;
      return std::nullopt;
    }
    auto ann = [&](const char* k) { return a->annotations.count(k) ? a->annotations.at(k) : std::string(); };
    if (a->artifactType != kLayerScanArtifactType || ann("dev.kernodeck.layer") != layer.digest.str() ||
        ann("dev.kernodeck.analysis-version") != std::to_string(kAnalysisVersion)) {
      out.ignored = "not a result of this layer and analysis version";
      return std::nullopt;
    }
    const oci::Descriptor* envelopeBlob = nullptr;
    const oci::Descriptor* scanBlob = nullptr;
    for (const auto& b : a->blobs) {
      if (b.mediaType == kDsseEnvelopeMediaType && !envelopeBlob) envelopeBlob = &b;
      if (b.mediaType == kLayerScanMediaType && !scanBlob) scanBlob = &b;
    }
    if (!envelopeBlob) {
      out.ignored = "not signed";
      return std::nullopt;
    }
    if (!scanBlob) {
      out.ignored = "it holds no scan";
      return std::nullopt;
    }
    auto bytes = client_.smallBlob(*envelopeBlob, kMaxEnvelopeBytes);
    auto envelope = bytes.ok() ? util::parseEnvelope(*bytes) : Result<util::Envelope>(bytes.error());
    if (!envelope.ok()) {
      out.ignored = "its signature cannot be read: " + envelope.error().message;
      return std::nullopt;
    }
    if (envelope->payloadType != kLayerScanStatementType) {
      out.ignored = "its envelope signs a '" + envelope->payloadType + "', not a layer result";
      return std::nullopt;
    }
    bool verified = false;
    std::string why = trust_.trusted.empty() ? "no key is trusted (--cache-key)" : "";
    for (const util::Key* k : trust_.trusted) {
      Status v = util::verifyEnvelope(*envelope, *k);
      if (v.ok()) {
        verified = true;
        break;
      }
      if (why.empty()) why = v.error().message;
    }
    if (!verified) {
      out.ignored = "its signature is not by a trusted key: " + why;
      return std::nullopt;
    }
    json st = json::parse(envelope->payload, nullptr, false);
    if (!st.is_object() || st.value("_type", "") != kStatementType) {
      out.ignored = "its signed statement is not a " + std::string(kStatementType);
      return std::nullopt;
    }
    json want = json::parse(statementFor(layer, opts, ""));
    if (st.value("layer", json()) != want["layer"] ||
        st.value("analysis_version", json()) != want["analysis_version"]) {
      out.ignored = "it is signed for another layer or analysis version";
      return std::nullopt;
    }
    if (st.value("options", json()) != want["options"]) {
      out.ignored = "it was made with other options (" + st.value("options", json()).dump() + ", this audit uses " +
                    want["options"].dump() + ")";
      return std::nullopt;
    }
    json signedScan = st.value("scan", json());
    if (!signedScan.is_object() || signedScan.value("digest", json()) != scanBlob->digest.str() ||
        signedScan.value("size", json()) != json(scanBlob->size)) {
      out.ignored = "its scan is not the one its statement signs";
      return std::nullopt;
    }
    return *scanBlob;
  }

  Client client_;
  ScanTrust trust_;
  std::mutex warnMutex_;
};

}  // namespace

std::string scanTag(const oci::Digest& layer) {
  return layer.algorithm + "-" + layer.encoded.substr(0, 64) + ".v" + std::to_string(kAnalysisVersion);
}

Result<std::shared_ptr<oci::SharedScanStore>> openRegistryScanStore(const std::string& repo, const ClientOptions& opts,
                                                                    ScanTrust trust) {
  KDK_TRY_ASSIGN(Reference ref, parseReference(repo));
  if (ref.tagGiven || ref.digest)
    return Error::Invalid("--cache-repo takes REGISTRY/REPOSITORY without a tag or digest, not '" + repo + "'");
  if (repo.find('/') == std::string::npos || ref.registry == "docker.io")
    return Error::Invalid("--cache-repo needs an explicit registry: REGISTRY/REPOSITORY, not '" + repo + "'");
  return std::shared_ptr<oci::SharedScanStore>(new RegistryScanStore(ref, opts, std::move(trust)));
}

}  // namespace kernodeck::registry
