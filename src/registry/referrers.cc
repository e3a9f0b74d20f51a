// See referrers.h.
#include "kernodeck/registry/referrers.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "kernodeck/oci/index_walk.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"

namespace kernodeck::registry {

using nlohmann::json;

namespace {

const std::string kEmptyConfig = "{}";

json descriptorJson(const oci::Descriptor& d, const std::string& artifactType = "") {
  json j = {{"mediaType", d.mediaType}, {"digest", d.digest.str()}, {"size", d.size}};
  if (!artifactType.empty()) j["artifactType"] = artifactType;
  if (!d.annotations.empty()) j["annotations"] = d.annotations;
  return j;
}

oci::Descriptor blobDescriptor(const std::string& mediaType, const std::string& bytes) {
  oci::Descriptor d;
  d.mediaType = mediaType;
  d.digest = oci::Digest{"sha256", util::sha256Hex(bytes)};
  d.size = static_cast<int64_t>(bytes.size());
  return d;
}

// The fallback index of `subject`: its bytes' entries, or an empty index when the tag is absent.
Result<json> readFallbackIndex(Client& c, const oci::Digest& subject) {
  auto m = c.manifest(fallbackTag(subject));
  if (!m.ok()) {
    if (m.error().is(ErrorKind::NotFound))
      return json{{"schemaVersion", 2}, {"mediaType", oci::media::kOciIndex}, {"manifests", json::array()}};
    return m.error();
  }
  json j = util::parseUntrustedJson(m->bytes);
  if (!j.is_object() || !j.contains("manifests") || !j["manifests"].is_array())
    return Error::Corrupt(c.reference().registry + "/" + c.reference().repository + ":" + fallbackTag(subject) +
                          ": the referrers fallback tag does not hold an image index");
  return j;
}

// The string at `key` of an object someone else wrote; empty when absent or of another type.
std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

bool listsDigest(const json& index, const oci::Digest& d) {
  for (const auto& m : index["manifests"])
    if (str(m, "digest") == d.str()) return true;
  return false;
}

}  // namespace

std::string fallbackTag(const oci::Digest& subject) { return subject.algorithm + "-" + subject.encoded.substr(0, 64); }

std::string artifactManifest(const Artifact& a) {
  json layers = json::array();
  for (const auto& b : a.blobs) layers.push_back(descriptorJson(blobDescriptor(b.mediaType, b.bytes)));
  json m = {{"schemaVersion", 2},
            {"mediaType", oci::media::kOciManifest},
            {"artifactType", a.artifactType},
            {"config", descriptorJson(blobDescriptor(kEmptyConfigType, kEmptyConfig), a.configArtifactType)},
            {"layers", layers}};
  if (a.subject) {
    oci::Descriptor s = *a.subject;
    s.annotations.clear();
    m["subject"] = descriptorJson(s);
  }
  if (!a.annotations.empty()) m["annotations"] = a.annotations;
  return m.dump();
}

Result<oci::Descriptor> pushArtifact(Client& c, const Artifact& a, const std::string& tag) {
  std::string bytes = artifactManifest(a);
  oci::Descriptor desc = blobDescriptor(oci::media::kOciManifest, bytes);
  desc.annotations = a.annotations;
  // docker-registry 2.8 can refuse a manifest as "blob unknown" while another client's upload
  // of the same blob into the repository is being linked (the empty config is in every
  // artifact): a refused push is retried, blobs first.
  std::optional<PushedManifest> pushed;
  for (int attempt = 0; !pushed; ++attempt) {
    KDK_TRY_STATUS(c.pushBlob(kEmptyConfig));
    for (const auto& b : a.blobs) KDK_TRY_STATUS(c.pushBlob(b.bytes));
    auto put = c.putManifest(tag.empty() ? desc.digest.str() : tag, bytes, oci::media::kOciManifest);
    if (put.ok())
      pushed = *put;
    else if (!put.error().is(ErrorKind::Invalid) || attempt >= 4)
      return put.error();
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(100 * (attempt + 1)));
  }
  if (!a.subject || !pushed->subjectHeader.empty()) return desc;
  // No referrers API: keep the fallback index. Concurrent writers of the same index can drop
  // each other's entry; reading it back after the write catches that, and the write is retried.
  for (int attempt = 0; attempt < 8; ++attempt) {
    KDK_TRY_ASSIGN(json index, readFallbackIndex(c, a.subject->digest));
    if (listsDigest(index, desc.digest)) return desc;
    index["manifests"].push_back(descriptorJson(desc, a.artifactType));
    KDK_TRY_STATUS(c.putManifest(fallbackTag(a.subject->digest), index.dump(), oci::media::kOciIndex));
    KDK_TRY_ASSIGN(json back, readFallbackIndex(c, a.subject->digest));
    if (listsDigest(back, desc.digest)) return desc;
    std::this_thread::sleep_for(std::chrono::milliseconds(50 * (attempt + 1)));
  }
  return Error::Io(c.reference().registry + "/" + c.reference().repository + ":" + fallbackTag(a.subject->digest) +
                   ": the referrers index kept losing the new entry to concurrent writers");
}

Result<std::vector<Referrer>> parseReferrers(std::string_view text, const std::string& artifactType,
                                             const std::string& what) {
  json index = util::parseUntrustedJson(text);
  if (!index.is_object() || !index.contains("manifests") || !index["manifests"].is_array())
    return Error::Corrupt(what + " is not an image index");
  std::vector<Referrer> out;
  size_t position = 0;
  for (const auto& m : index["manifests"]) {
    Referrer r;
    r.position = position++;
    r.artifactType = str(m, "artifactType");
    if (!artifactType.empty() && r.artifactType != artifactType) continue;
    r.digest = str(m, "digest");
    auto d = oci::parseDescriptor(m);
    if (d.ok())
      r.desc = *d;
    else
      r.problem = d.error().message;
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<Referrer>> listReferrers(Client& c, const oci::Digest& subject, const std::string& artifactType,
                                            bool* truncated) {
  if (truncated) *truncated = false;
  KDK_TRY_ASSIGN(std::optional<ReferrersAnswer> api, c.referrers(subject, artifactType));
  std::string where = c.reference().registry + "/" + c.reference().repository;
  if (api) {
    // Filtered here whatever OCI-Filters-Applied says (a registry without it lists every type).
    std::vector<Referrer> out;
    size_t position = 0;
    for (size_t i = 0; i < api->pages.size(); ++i) {
      KDK_TRY_ASSIGN(std::vector<Referrer> page,
                     parseReferrers(api->pages[i], "",
                                    where + ": the referrers of " + subject.str() +
                                        (api->pages.size() > 1 ? " (page " + std::to_string(i + 1) + ")" : "")));
      for (auto& r : page) {
        r.position = position++;
        if (!artifactType.empty() && r.artifactType != artifactType) continue;
        out.push_back(std::move(r));
      }
    }
    if (truncated) *truncated = api->truncated;
    return out;
  }
  auto m = c.manifest(fallbackTag(subject));
  if (!m.ok()) {
    if (m.error().is(ErrorKind::NotFound)) return std::vector<Referrer>{};
    return m.error();
  }
  return parseReferrers(m->bytes, artifactType, where + ":" + fallbackTag(subject) + " (the referrers fallback tag)");
}

Result<FetchedArtifact> parseArtifact(std::string_view bytes, const std::string& what) {
  json j = util::parseUntrustedJson(bytes);
  if (!j.is_object() || str(j, "mediaType") != oci::media::kOciManifest || !j.contains("layers") ||
      !j["layers"].is_array())
    return Error::Corrupt(what + ": not an OCI artifact manifest");
  FetchedArtifact a;
  a.desc = blobDescriptor(oci::media::kOciManifest, std::string(bytes));
  a.artifactType = str(j, "artifactType");
  // The spec: the config's type stands in for a missing artifactType.
  if (a.artifactType.empty() && j.contains("config")) a.artifactType = str(j["config"], "mediaType");
  if (j.contains("subject")) {
    auto s = oci::parseDescriptor(j["subject"]);
    if (!s.ok()) return Error::Corrupt(what + ": subject: " + s.error().message);
    a.subject = *s;
  }
  for (const auto& l : j["layers"]) {
    auto d = oci::parseDescriptor(l);
    if (!d.ok()) return Error::Corrupt(what + ": layer: " + d.error().message);
    a.blobs.push_back(*d);
  }
  if (j.contains("annotations") && j["annotations"].is_object())
    for (auto it = j["annotations"].begin(); it != j["annotations"].end(); ++it)
      if (it.value().is_string()) a.annotations[it.key()] = it.value().get<std::string>();
  return a;
}

Result<FetchedArtifact> fetchArtifact(Client& c, const std::string& ref, uint64_t maxBytes) {
  KDK_TRY_ASSIGN(Manifest m, c.manifest(ref, maxBytes));
  return parseArtifact(m.bytes, c.reference().registry + "/" + c.reference().repository + "@" + m.digest.str());
}

Result<oci::Descriptor> resolveImageManifest(Client& c, const std::string& tagOrDigest, const oci::Platform& platform) {
  KDK_TRY_ASSIGN(Manifest m, c.manifest(tagOrDigest));
  oci::Descriptor top = blobDescriptor(m.mediaType.empty() ? oci::media::kOciManifest : m.mediaType, m.bytes);
  // Nested indexes and entries without a platform as containerd follows them (oci/index_walk.h);
  // manifests come through the manifests endpoint, configs as blobs, each verified by the client.
  auto read = [&](const oci::Descriptor& d, const std::string& what) -> Result<std::string> {
    if (what == "config") return c.smallBlob(d, oci::kMaxManifestBytes);
    KDK_TRY_ASSIGN(Manifest inner, c.manifest(d.digest.str()));
    return inner.bytes;
  };
  auto choice = oci::chooseManifest(top, m.bytes, platform, read);
  if (!choice.ok())
    return choice.error().context(c.reference().registry + "/" + c.reference().repository + "@" + m.digest.str());
  oci::Descriptor d = choice->manifest;
  d.size = static_cast<int64_t>(choice->bytes.size());
  return d;
}

}  // namespace kernodeck::registry
