// See cosign_layout.h. The config is the one go-containerregistry writes for an image built by
// appending layers to an empty one (cosign's way): the layers' digests as diff_ids (the
// envelopes are not compressed) and one history entry per layer.
#include "kernodeck/attest/cosign_layout.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "kernodeck/attest/dsse.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"

namespace kernodeck::attest {

using nlohmann::json;

std::string cosignAttestationTag(const oci::Digest& subject) {
  return subject.algorithm + "-" + subject.encoded.substr(0, 64) + ".att";
}

namespace {

json descriptorJson(const oci::Descriptor& d) {
  json j = {{"mediaType", d.mediaType}, {"digest", d.digest.str()}, {"size", d.size}};
  if (!d.annotations.empty()) j["annotations"] = d.annotations;
  return j;
}

std::string annotation(const json& layer, const char* key) {
  if (!layer.is_object() || !layer.contains("annotations") || !layer["annotations"].is_object()) return "";
  const json& a = layer["annotations"];
  return a.contains(key) && a[key].is_string() ? a[key].get<std::string>() : "";
}

}  // namespace

Result<CosignImage> mergeCosignAttestation(std::optional<std::string_view> existing, const oci::Descriptor& layer,
                                           const std::string& predicateType) {
  json layers = json::array();
  if (existing) {
    json m = util::parseUntrustedJson(*existing);
    if (!m.is_object() || !m.contains("layers") || !m["layers"].is_array() || !m.contains("config"))
      return Error::Corrupt("not an image manifest; left as it is");
    for (const auto& l : m["layers"]) {
      // Another tool's layer is kept as it is, even one this code could not read.
      auto d = oci::parseDescriptor(l);
      if (d.ok() && d->digest == layer.digest) continue;
      if (annotation(l, kCosignPredicateTypeAnnotation) == predicateType) continue;
      layers.push_back(l);
    }
  }
  oci::Descriptor ours = layer;
  ours.annotations = {{kCosignSignatureAnnotation, ""}, {kCosignPredicateTypeAnnotation, predicateType}};
  layers.push_back(descriptorJson(ours));

  json diffIds = json::array(), history = json::array();
  for (const auto& l : layers) {
    diffIds.push_back(l.is_object() && l.contains("digest") ? l["digest"] : json(""));
    history.push_back({{"created", "0001-01-01T00:00:00Z"}});
  }
  json config = {{"architecture", ""},
                 {"created", "0001-01-01T00:00:00Z"},
                 {"history", history},
                 {"os", ""},
                 {"rootfs", {{"type", "layers"}, {"diff_ids", diffIds}}},
                 {"config", json::object()}};
  CosignImage out;
  out.config = config.dump();
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", oci::media::kOciManifest},
                   {"config",
                    {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                     {"digest", "sha256:" + util::sha256Hex(out.config)},
                     {"size", out.config.size()}}},
                   {"layers", layers}};
  out.manifest = manifest.dump();
  return out;
}

Result<oci::Digest> pushCosignAttestation(registry::Client& c, const oci::Digest& subject, const std::string& envelope,
                                          const std::string& predicateType) {
  std::string tag = cosignAttestationTag(subject);
  std::string where = c.reference().registry + "/" + c.reference().repository + ":" + tag;
  KDK_TRY_ASSIGN(oci::Digest blob, c.pushBlob(envelope));
  oci::Descriptor layer;
  layer.mediaType = kDsseMediaType;
  layer.digest = blob;
  layer.size = static_cast<int64_t>(envelope.size());
  auto holds = [&](const std::string& bytes) {
    json m = util::parseUntrustedJson(bytes);
    if (!m.is_object() || !m.contains("layers") || !m["layers"].is_array()) return false;
    for (const auto& l : m["layers"])
      if (l.is_object() && l.contains("digest") && l["digest"] == blob.str()) return true;
    return false;
  };
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::optional<std::string> existing;
    auto now = c.manifest(tag);
    if (now.ok())
      existing = now->bytes;
    else if (!now.error().is(ErrorKind::NotFound))
      return Error::Io(where + ": " + now.error().message);
    auto image = mergeCosignAttestation(existing, layer, predicateType);
    if (!image.ok()) return Error::Corrupt(where + ": " + image.error().message);
    KDK_TRY_STATUS(c.pushBlob(image->config));
    KDK_TRY_STATUS(c.putManifest(tag, image->manifest, oci::media::kOciManifest));
    auto back = c.manifest(tag);
    if (back.ok() && holds(back->bytes)) return back->digest;
    std::this_thread::sleep_for(std::chrono::milliseconds(50 * (attempt + 1)));
  }
  return Error::Io(where + ": the attestation image kept losing the new layer to concurrent writers");
}

}  // namespace kernodeck::attest
