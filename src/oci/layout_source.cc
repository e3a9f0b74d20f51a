// Image sources over an OCI image layout (a directory, or a tar of one: oci-archive)
// and over `docker save` output (docker-archive), in both its legacy
// manifest.json form and the newer form that carries an OCI layout inside.
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "kernodeck/oci/index_walk.h"
#include "kernodeck/oci/schema_check.h"
#include "kernodeck/oci/source.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::oci {

using nlohmann::json;

namespace {

constexpr const char* kRefName = "org.opencontainers.image.ref.name";

std::string blobPath(const Digest& d) { return "blobs/" + d.algorithm + "/" + d.encoded; }

Result<json> readJson(FileAccess& fa, const std::string& name) {
  KDK_TRY_ASSIGN(std::string bytes, fa.read(name, kMaxManifestBytes));
  KDK_TRY_STATUS(util::checkJsonNesting(bytes, fa.where(name)));
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
    if (!fa_->exists("oci-layout"))
      return Error::Invalid(fa_->where("oci-layout") + " is missing: not an OCI image layout");
    KDK_TRY_ASSIGN(json layout, readJson(*fa_, "oci-layout"));
    if (!layout.is_object() || !layout.contains("imageLayoutVersion") || !layout["imageLayoutVersion"].is_string())
      return Error::Invalid(fa_->where("oci-layout") + " has no imageLayoutVersion");
    if (std::string v = layout["imageLayoutVersion"].get<std::string>(); v != "1.0.0")
      findings_.push_back({"layout.schema.invalid",
                           "error",
                           fa_->where("oci-layout") + ": imageLayoutVersion is '" + util::printable(v.substr(0, 40)) +
                               "', the image spec defines only 1.0.0",
                           {{"field", "imageLayoutVersion"}}});
    KDK_TRY_ASSIGN(json index, readJson(*fa_, "index.json"));
    if (!index.is_object() || !index.contains("manifests") || !index["manifests"].is_array())
      return Error::Invalid(fa_->where("index.json") + ": index has no manifests array");
    // Entry by entry: a malformed one concerns only the image it names.
    struct Entry {
      size_t n;
      std::string name;
      std::string rawDigest;
      Result<Descriptor> desc;
    };
    std::vector<Entry> entries;
    for (size_t i = 0; i < index["manifests"].size(); ++i) {
      const json& j = index["manifests"][i];
      std::string name, rawDigest;
      if (j.is_object() && j.contains("annotations") && j["annotations"].is_object() &&
          j["annotations"].contains(kRefName) && j["annotations"][kRefName].is_string())
        name = j["annotations"][kRefName].get<std::string>();
      if (j.is_object() && j.contains("digest") && j["digest"].is_string()) rawDigest = j["digest"].get<std::string>();
      entries.push_back({i, name, rawDigest, parseDescriptor(j)});
    }
    auto bad = [&](const Entry& e) {
      return Error::Invalid(fa_->where("index.json") + " manifests[" + std::to_string(e.n) + "]" +
                            (e.name.empty() ? "" : " ('" + util::printable(e.name) + "')") + ": " +
                            e.desc.error().message);
    };
    // The entry an audit resolves through is a descriptor like any other: schema-checked.
    auto checked = [&](const Entry& e) -> Descriptor {
      std::vector<SchemaIssue> issues;
      checkDescriptorSchema(index["manifests"][e.n], "manifests[" + std::to_string(e.n) + "]", issues);
      for (const auto& issue : issues)
        findings_.push_back({"index.schema.invalid",
                             "error",
                             fa_->where("index.json") + ": " + issue.field + ": " + issue.message,
                             {{"field", issue.field}, {"digest", e.desc->digest.str()}}});
      return *e.desc;
    };
    if (digest_) {
      for (const auto& e : entries) {
        if (e.desc.ok() && e.desc->digest == *digest_) return checked(e);
        if (!e.desc.ok() && e.rawDigest == digest_->str()) return bad(e);
      }
      // Not listed in index.json: accept a blob of that digest if the layout has one.
      int64_t sz = fa_->size(blobPath(*digest_));
      if (sz < 0) return Error::NotFound("no manifest " + digest_->str() + " in " + fa_->where("index.json"));
      KDK_TRY_ASSIGN(std::string mbytes, fa_->read(blobPath(*digest_), kMaxManifestBytes));
      KDK_TRY_ASSIGN(DocKind kind, detectKind(mbytes));
      return Descriptor{kind == DocKind::Index ? media::kOciIndex : media::kOciManifest, *digest_, sz, {}, {}, {}};
    }
    std::vector<const Entry*> matches;
    std::string tags;
    for (const auto& e : entries) {
      if (!e.name.empty()) tags += (tags.empty() ? "" : ", ") + e.name;
      if (!tag_.empty() && e.name != tag_) continue;
      // The same image listed twice under one name is one image.
      bool same = false;
      for (const Entry* m : matches) same = same || (m->desc.ok() && e.desc.ok() && m->desc->digest == e.desc->digest);
      if (!same) matches.push_back(&e);
    }
    if (matches.size() == 1) {
      if (!matches[0]->desc.ok()) return bad(*matches[0]);
      if (!matches[0]->name.empty()) resolvedTag_ = matches[0]->name;
      return checked(*matches[0]);
    }
    if (matches.empty() && !tag_.empty())
      return Error::NotFound("no image tagged '" + tag_ + "' in " + fa_->where("index.json") +
                             (tags.empty() ? "" : " (has: " + tags + ")"));
    if (matches.empty()) return Error::NotFound(fa_->where("index.json") + " lists no images");
    return Error::Invalid(fa_->where("index.json") + " lists " + std::to_string(matches.size()) +
                          " images; name one with :TAG or @DIGEST" + (tags.empty() ? "" : " (tags: " + tags + ")"));
  }

  std::vector<SourceFinding> findings() const override { return findings_; }

  // A blob of an algorithm Kernodeck cannot verify is still read (blobs/ALG/ENCODED: the
  // digest grammar allows no '/'): the audit reports it as unverifiable.
  Result<std::unique_ptr<ByteStream>> openBlob(const Descriptor& d) override {
    auto s = fa_->open(blobPath(d.digest));
    if (!s.ok() && s.error().is(ErrorKind::NotFound))
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
  std::vector<SourceFinding> findings_;
};

// Compression of a stream by its first bytes (gzip, zstd magic numbers), as docker load
// and containers/image recognise a layer whatever its file is called.
Compression sniffCompression(FileAccess& fa, const std::string& name) {
  auto s = fa.open(name);
  if (!s.ok()) return Compression::Unknown;
  unsigned char head[4] = {0, 0, 0, 0};
  size_t got = 0;
  while (got < sizeof head) {
    auto r = (*s)->read(head + got, sizeof head - got);
    if (!r.ok() || *r == 0) break;
    got += *r;
  }
  if (got >= 2 && head[0] == 0x1f && head[1] == 0x8b) return Compression::Gzip;
  if (got == 4 && head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd) return Compression::Zstd;
  return Compression::None;
}

// docker-archive (docker save, podman save, skopeo, go-containerregistry's tarball):
// manifest.json names the config and the layer files of each image. When the archive also
// holds an OCI layout (docker 25+ writes one) and it has the chosen image's manifest, that
// manifest is read as it is, with its digest. Otherwise a manifest is synthesised (Docker v2
// schema 2): the config's digest is that of its bytes, and each layer's digest is its DiffID,
// whatever the file's compression (gzip and zstd are recognised by their bytes), so a layer
// is verified by its DiffID after inflating (synthetic()).
class DockerArchiveSource : public ImageSource {
 public:
  DockerArchiveSource(std::unique_ptr<FileAccess> fa, std::string tag, std::optional<size_t> index)
      : fa_(std::move(fa)), tag_(std::move(tag)), index_(index) {}

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
    if (index_) {
      if (*index_ >= mj.size())
        return Error::NotFound("no image @" + std::to_string(*index_) + " in " + fa_->where("manifest.json") +
                               ", which holds " + std::to_string(mj.size()) + " (counted from @0)");
      chosen = &mj[*index_];
    } else if (tag_.empty()) {
      if (mj.size() != 1)
        return Error::Invalid(
            fa_->where("manifest.json") + " holds " + std::to_string(mj.size()) +
            " images; name one as docker-archive:FILE:REPO:TAG or docker-archive:FILE:@N (tags: " + tags + ")");
      chosen = &mj[0];
    }
    if (!chosen)
      return Error::NotFound("no image tagged '" + tag_ + "' in " + fa_->where("manifest.json") + " (has: " + tags +
                             ")");
    const json& e = *chosen;
    if (!e.contains("Config") || !e["Config"].is_string() || !e.contains("Layers") || !e["Layers"].is_array())
      return Error::Invalid(fa_->where("manifest.json") + " entry lacks Config or Layers");
    if (!tag_.empty())
      resolvedTag_ = tag_;
    else if (e.contains("RepoTags") && e["RepoTags"].is_array() && !e["RepoTags"].empty() &&
             e["RepoTags"][0].is_string())
      resolvedTag_ = e["RepoTags"][0].get<std::string>();

    std::string configName = e["Config"].get<std::string>();
    KDK_TRY_ASSIGN(std::string configBytes, fa_->read(configName, kMaxManifestBytes));
    // The config is known by its bytes, whatever its file is called.
    Digest configDigest{"sha256", util::sha256Hex(configBytes)};
    if (auto d = fromLayout(configDigest)) return *d;

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
      const Digest& d = cfg.diffIds[i];
      paths_[d.str()] = name;
      std::string mt = media::kDockerLayerTar;
      switch (sniffCompression(*fa_, name)) {
        case Compression::Gzip: mt = media::kDockerLayerGzip; break;
        case Compression::Zstd: mt = "application/vnd.oci.image.layer.v1.tar+zstd"; break;
        default: break;
      }
      m["layers"].push_back({{"mediaType", mt}, {"digest", d.str()}, {"size", sz}});
    }
    manifestBytes_ = m.dump();
    Digest md{"sha256", util::sha256Hex(manifestBytes_)};
    return Descriptor{media::kDockerManifest, md, static_cast<int64_t>(manifestBytes_.size()), {}, {}, {}};
  }

  Result<std::unique_ptr<ByteStream>> openBlob(const Descriptor& d) override {
    if (layout_) return fa_->open(blobPath(d.digest));
    if (d.mediaType == media::kDockerManifest && !manifestBytes_.empty() &&
        d.digest.encoded == util::sha256Hex(manifestBytes_))
      return std::unique_ptr<ByteStream>(new MemoryStream(manifestBytes_));
    auto it = paths_.find(d.digest.str());
    if (it == paths_.end())
      return Error::NotFound("blob " + d.digest.str() + " is not in " + fa_->where("manifest.json"));
    return fa_->open(it->second);
  }

  std::string where(const Descriptor& d) const override {
    if (layout_) return fa_->where(blobPath(d.digest));
    auto it = paths_.find(d.digest.str());
    return fa_->where(it == paths_.end() ? "manifest.json" : it->second);
  }
  bool synthetic() const override { return !layout_; }
  std::string tag() const override { return resolvedTag_; }

 private:
  // The manifest in the archive's OCI layout (docker 25+) whose config has this digest, looked
  // for through nested indexes too (at most kMaxIndexDepth deep, each index read once).
  std::optional<Descriptor> fromLayout(const Digest& config) {
    if (!fa_->exists("index.json") || !fa_->exists("oci-layout")) return std::nullopt;
    auto bytes = fa_->read("index.json", kMaxManifestBytes);
    if (!bytes.ok()) return std::nullopt;
    std::set<std::string> seen;
    return findManifest(*bytes, config, 1, seen);
  }

  std::optional<Descriptor> findManifest(const std::string& indexBytes, const Digest& config, size_t depth,
                                         std::set<std::string>& seen) {
    auto index = parseIndex(indexBytes);
    if (!index.ok()) return std::nullopt;
    for (const auto& d : index->manifests) {
      if (!d.digest.verifiable() || !seen.insert(d.digest.str()).second) continue;
      auto mb = fa_->read(blobPath(d.digest), kMaxManifestBytes);
      if (!mb.ok()) continue;
      auto kind = detectKind(*mb, d.mediaType);
      if (kind.ok() && *kind == DocKind::Index) {
        if (depth >= kMaxIndexDepth) continue;
        if (auto found = findManifest(*mb, config, depth + 1, seen)) return found;
        continue;
      }
      auto m = parseManifest(*mb);
      if (m.ok() && m->config.digest == config) {
        layout_ = true;
        return d;
      }
    }
    return std::nullopt;
  }

  std::unique_ptr<FileAccess> fa_;
  std::string tag_;
  std::optional<size_t> index_;
  std::string resolvedTag_;
  std::string manifestBytes_;
  std::map<std::string, std::string> paths_;
  bool layout_ = false;
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
      return std::unique_ptr<ImageSource>(new DockerArchiveSource(std::move(fa), ref.tag, ref.sourceIndex));
    }
    case Transport::Dir: return openSkopeoDir(ref.path);
    case Transport::RootFs: return Error::Invalid("rootfs: references are root filesystems, not image sources");
    case Transport::Registry:
      return Error::Unsupported("registry references are not supported yet: '" + ref.raw +
                                "' (use oci:, oci-archive:, docker-archive:, dir: or rootfs:)");
  }
  return Error::Invalid("unknown transport");
}

}  // namespace kernodeck::oci
