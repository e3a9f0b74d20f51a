// Image sources over an OCI image layout (a directory, or a tar of one: oci-archive)
// and over `docker save` output (docker-archive), in both its legacy
// manifest.json form and the newer form that carries an OCI layout inside.
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "kernodeck/oci/source.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::oci {

using nlohmann::json;

namespace {

constexpr const char* kRefName = "org.opencontainers.image.ref.name";

std::string blobPath(const Digest& d) { return "blobs/" + d.algorithm + "/" + d.encoded; }

Result<json> readJson(FileAccess& fa, const std::string& name) {
  KDK_TRY_ASSIGN(std::string bytes, fa.read(name, kMaxManifestBytes));
  json j = json::parse(bytes, nullptr, false);
  if (j.is_discarded()) return Error::Invalid(fa.where(name) + " is not valid JSON");
  return j;
}

// Normalises a docker tag reference for matching: drops docker.io/library/, adds :latest.
std::string normalTag(std::string t) {
  for (const char* p : {"docker.io/library/", "index.docker.io/library/", "docker.io/"})
    if (t.rfind(p, 0) == 0) {
      t = t.substr(std::string(p).size());
      break;
    }
  size_t slash = t.rfind('/');
  size_t colon = t.rfind(':');
  if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) t += ":latest";
  return t;
}

class LayoutSource : public ImageSource {
 public:
  LayoutSource(std::unique_ptr<FileAccess> fa, std::string tag, std::optional<Digest> digest)
      : fa_(std::move(fa)), tag_(std::move(tag)), digest_(std::move(digest)) {}

  Result<Descriptor> resolve() override {
    if (!fa_->exists("oci-layout")) return Error::Invalid(fa_->where("oci-layout") + " is missing: not an OCI image layout");
    KDK_TRY_ASSIGN(json layout, readJson(*fa_, "oci-layout"));
    if (!layout.is_object() || !layout.contains("imageLayoutVersion") || !layout["imageLayoutVersion"].is_string())
      return Error::Invalid(fa_->where("oci-layout") + " has no imageLayoutVersion");
    KDK_TRY_ASSIGN(std::string bytes, fa_->read("index.json", kMaxManifestBytes));
    auto index = parseIndex(bytes);
    if (!index.ok()) return Error::Invalid(fa_->where("index.json") + ": " + index.error().message);
    if (digest_) {
      for (const auto& d : index->manifests)
        if (d.digest == *digest_) return d;
      // Not listed in index.json: accept a blob of that digest if the layout has one.
      int64_t sz = fa_->size(blobPath(*digest_));
      if (sz < 0) return Error::NotFound("no manifest " + digest_->str() + " in " + fa_->where("index.json"));
      KDK_TRY_ASSIGN(std::string mbytes, fa_->read(blobPath(*digest_), kMaxManifestBytes));
      KDK_TRY_ASSIGN(DocKind kind, detectKind(mbytes));
      return Descriptor{kind == DocKind::Index ? media::kOciIndex : media::kOciManifest, *digest_, sz, {}, {}, {}};
    }
    std::vector<const Descriptor*> matches;
    std::string tags;
    for (const auto& d : index->manifests) {
      auto it = d.annotations.find(kRefName);
      std::string name = it == d.annotations.end() ? "" : it->second;
      if (!name.empty()) tags += (tags.empty() ? "" : ", ") + name;
      if (tag_.empty() || name == tag_) matches.push_back(&d);
    }
    if (matches.size() == 1) {
      auto it = matches[0]->annotations.find(kRefName);
      if (it != matches[0]->annotations.end()) resolvedTag_ = it->second;
      return *matches[0];
    }
    if (matches.empty() && !tag_.empty())
      return Error::NotFound("no image tagged '" + tag_ + "' in " + fa_->where("index.json") +
                             (tags.empty() ? "" : " (has: " + tags + ")"));
    if (matches.empty()) return Error::NotFound(fa_->where("index.json") + " lists no images");
    return Error::Invalid(fa_->where("index.json") + " lists " + std::to_string(matches.size()) +
                          " images; name one with :TAG or @DIGEST" + (tags.empty() ? "" : " (tags: " + tags + ")"));
  }

  Result<std::unique_ptr<ByteStream>> openBlob(const Descriptor& d) override {
    if (!d.digest.verifiable())
      return Error::Unsupported("blob " + d.digest.str() + " uses an algorithm Kernodeck cannot verify");
    auto s = fa_->open(blobPath(d.digest));
    if (!s.ok() && s.error().code == "not_found")
      return Error::NotFound("blob " + d.digest.str() + " is missing from " + fa_->where("blobs"));
    return s;
  }

  std::string where(const Descriptor& d) const override { return fa_->where(blobPath(d.digest)); }
  std::string tag() const override { return resolvedTag_.empty() ? tag_ : resolvedTag_; }

 private:
  std::unique_ptr<FileAccess> fa_;
  std::string tag_;
  std::optional<Digest> digest_;
  std::string resolvedTag_;
};

// Legacy docker-archive: manifest.json names the config and layer tars; the
// manifest is synthesised (Docker v2 schema 2) with each layer's digest equal to
// its DiffID, since legacy layers are uncompressed tars.
class DockerArchiveSource : public ImageSource {
 public:
  DockerArchiveSource(std::unique_ptr<FileAccess> fa, std::string tag) : fa_(std::move(fa)), tag_(std::move(tag)) {}

  Result<Descriptor> resolve() override {
    KDK_TRY_ASSIGN(json mj, readJson(*fa_, "manifest.json"));
    if (!mj.is_array() || mj.empty()) return Error::Invalid(fa_->where("manifest.json") + " is not a non-empty array");
    const json* chosen = nullptr;
    std::string tags;
    for (const auto& e : mj) {
      if (!e.is_object()) return Error::Invalid(fa_->where("manifest.json") + " has a non-object entry");
      if (e.contains("RepoTags") && e["RepoTags"].is_array())
        for (const auto& t : e["RepoTags"]) {
          if (!t.is_string()) continue;
          tags += (tags.empty() ? "" : ", ") + t.get<std::string>();
          if (!tag_.empty() && normalTag(t.get<std::string>()) == normalTag(tag_)) chosen = &e;
        }
    }
    if (tag_.empty()) {
      if (mj.size() != 1)
        return Error::Invalid(fa_->where("manifest.json") + " holds " + std::to_string(mj.size()) +
                              " images; name one as docker-archive:FILE:REPO:TAG (tags: " + tags + ")");
      chosen = &mj[0];
    }
    if (!chosen) return Error::NotFound("no image tagged '" + tag_ + "' in " + fa_->where("manifest.json") + " (has: " + tags + ")");
    const json& e = *chosen;
    if (!e.contains("Config") || !e["Config"].is_string() || !e.contains("Layers") || !e["Layers"].is_array())
      return Error::Invalid(fa_->where("manifest.json") + " entry lacks Config or Layers");
    if (!tag_.empty()) resolvedTag_ = tag_;
    else if (e.contains("RepoTags") && e["RepoTags"].is_array() && !e["RepoTags"].empty() && e["RepoTags"][0].is_string())
      resolvedTag_ = e["RepoTags"][0].get<std::string>();

    std::string configName = e["Config"].get<std::string>();
    KDK_TRY_ASSIGN(std::string configBytes, fa_->read(configName, kMaxManifestBytes));
    // The digest is in the name (legacy "<hex>.json" or "blobs/sha256/<hex>"); the check
    // against the bytes happens where every config is verified.
    Digest configDigest{"sha256", util::sha256Hex(configBytes)};
    if (auto d = digestFromName(configName)) configDigest = *d;
    paths_[configDigest.str()] = configName;
    KDK_TRY_ASSIGN(ImageConfig cfg, parseConfig(configBytes));
    const json& layers = e["Layers"];
    if (layers.size() != cfg.diffIds.size())
      return Error::Invalid(fa_->where("manifest.json") + " lists " + std::to_string(layers.size()) +
                            " layers but the config has " + std::to_string(cfg.diffIds.size()) + " diff_ids");
    json m = {{"schemaVersion", 2}, {"mediaType", media::kDockerManifest}};
    m["config"] = {{"mediaType", media::kDockerConfig},
                   {"digest", configDigest.str()},
                   {"size", static_cast<int64_t>(configBytes.size())}};
    m["layers"] = json::array();
    for (size_t i = 0; i < layers.size(); ++i) {
      if (!layers[i].is_string()) return Error::Invalid(fa_->where("manifest.json") + " has a non-string layer");
      std::string name = layers[i].get<std::string>();
      int64_t sz = fa_->size(name);
      if (sz < 0) return Error::NotFound("layer " + fa_->where(name) + " named by manifest.json is missing");
      Digest d = digestFromName(name).value_or(cfg.diffIds[i]);
      paths_[d.str()] = name;
      m["layers"].push_back({{"mediaType", media::kDockerLayerTar}, {"digest", d.str()}, {"size", sz}});
    }
    manifestBytes_ = m.dump();
    Digest md{"sha256", util::sha256Hex(manifestBytes_)};
    return Descriptor{media::kDockerManifest, md, static_cast<int64_t>(manifestBytes_.size()), {}, {}, {}};
  }

  Result<std::unique_ptr<ByteStream>> openBlob(const Descriptor& d) override {
    if (d.mediaType == media::kDockerManifest && !manifestBytes_.empty() &&
        d.digest.encoded == util::sha256Hex(manifestBytes_))
      return std::unique_ptr<ByteStream>(new MemoryStream(manifestBytes_));
    auto it = paths_.find(d.digest.str());
    if (it == paths_.end()) return Error::NotFound("blob " + d.digest.str() + " is not in " + fa_->where("manifest.json"));
    return fa_->open(it->second);
  }

  std::string where(const Descriptor& d) const override {
    auto it = paths_.find(d.digest.str());
    return fa_->where(it == paths_.end() ? "manifest.json" : it->second);
  }
  bool synthetic() const override { return true; }
  std::string tag() const override { return resolvedTag_; }

 private:
  static std::optional<Digest> digestFromName(const std::string& name) {
    std::string base = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
    if (base.size() > 5 && base.substr(base.size() - 5) == ".json") base = base.substr(0, base.size() - 5);
    if (name.rfind("blobs/sha256/", 0) == 0 || name.size() == 69) {
      auto d = parseDigest("sha256:" + base);
      if (d.ok()) return *d;
    }
    return std::nullopt;
  }

  std::unique_ptr<FileAccess> fa_;
  std::string tag_;
  std::string resolvedTag_;
  std::string manifestBytes_;
  std::map<std::string, std::string> paths_;
};

}  // namespace

Result<std::unique_ptr<ImageSource>> openImageSource(const ImageRef& ref) {
  switch (ref.transport) {
    case Transport::OciLayout:
      return std::unique_ptr<ImageSource>(new LayoutSource(openDirAccess(ref.path), ref.tag, ref.digest));
    case Transport::OciArchive: {
      KDK_TRY_ASSIGN(auto fa, openTarAccess(ref.path));
      return std::unique_ptr<ImageSource>(new LayoutSource(std::move(fa), ref.tag, std::nullopt));
    }
    case Transport::DockerArchive: {
      KDK_TRY_ASSIGN(auto fa, openTarAccess(ref.path));
      return std::unique_ptr<ImageSource>(new DockerArchiveSource(std::move(fa), ref.tag));
    }
    case Transport::Dir:
      return Error::Invalid("dir: references are root filesystems, not image sources");
    case Transport::Registry:
      return Error::Unsupported("registry references are not supported yet: '" + ref.raw +
                                "' (use oci:, oci-archive:, docker-archive: or dir:)");
  }
  return Error::Invalid("unknown transport");
}

}  // namespace kernodeck::oci
