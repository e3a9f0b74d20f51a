#include "kernodeck/oci/manifest.h"

#include "kernodeck/util/json_read.h"

namespace kernodeck::oci {

using nlohmann::json;

Compression layerCompression(std::string_view mt) {
  static const std::string oci = "application/vnd.oci.image.layer.v1.tar";
  static const std::string ociNd = "application/vnd.oci.image.layer.nondistributable.v1.tar";
  for (const std::string& base : {oci, ociNd}) {
    if (mt == base) return Compression::None;
    if (mt == base + "+gzip") return Compression::Gzip;
    if (mt == base + "+zstd") return Compression::Zstd;
  }
  if (mt == media::kDockerLayerGzip || mt == "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip")
    return Compression::Gzip;
  if (mt == media::kDockerLayerTar || mt == "application/vnd.docker.image.rootfs.foreign.diff.tar")
    return Compression::None;
  return Compression::Unknown;
}

bool encryptedLayer(std::string_view mt) { return mt.ends_with("+encrypted"); }

bool imageConfigType(std::string_view mt) { return mt == media::kOciConfig || mt == media::kDockerConfig; }

const char* toString(Compression c) {
  switch (c) {
    case Compression::None: return "none";
    case Compression::Gzip: return "gzip";
    case Compression::Zstd: return "zstd";
    case Compression::Unknown: return "unknown";
  }
  return "unknown";
}

// RFC 6838's restricted names, type "/" subtype: a letter or digit, then up to 126 of letters,
// digits and !#$&^_.+- each. Checked by hand: compiling the std::regex it was took about a tenth
// of a replayed audit's own CPU time (issue 31).
bool validMediaType(std::string_view mt) {
  auto first = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  auto rest = [&](char c) { return first(c) || std::string_view("!#$&^_.+-").find(c) != std::string_view::npos; };
  auto name = [&](std::string_view n) {
    if (n.empty() || n.size() > 127 || !first(n[0])) return false;
    for (size_t i = 1; i < n.size(); ++i)
      if (!rest(n[i])) return false;
    return true;
  };
  size_t slash = mt.find('/');
  return slash != std::string_view::npos && name(mt.substr(0, slash)) && name(mt.substr(slash + 1));
}

std::string Platform::str() const {
  std::string s = os + "/" + architecture;
  if (!variant.empty()) s += "/" + variant;
  return s;
}

namespace {

Result<json> parseJson(std::string_view bytes, const char* what) {
  if (bytes.size() > kMaxManifestBytes) return Error::Invalid(std::string(what) + " is larger than 4 MiB");
  KDK_TRY_STATUS(util::checkJsonNesting(bytes, what));
  json j = json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error::Invalid(std::string(what) + " is not valid JSON");
  if (!j.is_object()) return Error::Invalid(std::string(what) + " is not a JSON object");
  return j;
}

Result<std::map<std::string, std::string>> stringMap(const json& j, const char* field) {
  std::map<std::string, std::string> out;
  if (!j.contains(field) || j[field].is_null()) return out;
  if (!j[field].is_object()) return Error::Invalid(std::string(field) + " must be an object");
  for (auto it = j[field].begin(); it != j[field].end(); ++it) {
    if (!it.value().is_string()) return Error::Invalid(std::string(field) + " values must be strings");
    out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

Result<std::vector<std::string>> stringList(const json& j, const char* field) {
  std::vector<std::string> out;
  if (!j.contains(field) || j[field].is_null()) return out;
  if (!j[field].is_array()) return Error::Invalid(std::string(field) + " must be an array");
  for (const auto& v : j[field]) {
    if (!v.is_string()) return Error::Invalid(std::string(field) + " entries must be strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::string optString(const json& j, const char* field) {
  if (j.contains(field) && j[field].is_string()) return j[field].get<std::string>();
  return {};
}

Status checkSchemaVersion(const json& j, const char* what) {
  if (!j.contains("schemaVersion") || !j["schemaVersion"].is_number_integer() || j["schemaVersion"].get<int64_t>() != 2)
    return Error::Invalid(std::string(what) + ": schemaVersion must be 2");
  return {};
}

}  // namespace

Result<Descriptor> parseDescriptor(const json& j) {
  if (!j.is_object()) return Error::Invalid("descriptor is not an object");
  Descriptor d;
  if (!j.contains("mediaType") || !j["mediaType"].is_string()) return Error::Invalid("descriptor has no mediaType");
  d.mediaType = j["mediaType"].get<std::string>();
  if (!validMediaType(d.mediaType))
    return Error::Invalid("descriptor mediaType '" + d.mediaType.substr(0, 100) + "' is malformed");
  if (!j.contains("digest") || !j["digest"].is_string()) return Error::Invalid("descriptor has no digest");
  KDK_TRY_ASSIGN(d.digest, parseDigest(j["digest"].get<std::string>()));
  if (!j.contains("size") || !j["size"].is_number_integer())
    return Error::Invalid("descriptor " + d.digest.str() + " has no integer size");
  d.size = j["size"].get<int64_t>();
  if (d.size < 0) return Error::Invalid("descriptor " + d.digest.str() + " has a negative size");
  KDK_TRY_ASSIGN(d.annotations, stringMap(j, "annotations"));
  KDK_TRY_ASSIGN(d.urls, stringList(j, "urls"));
  if (j.contains("platform") && !j["platform"].is_null()) {
    const json& p = j["platform"];
    if (!p.is_object() || !p.contains("os") || !p["os"].is_string() || !p.contains("architecture") ||
        !p["architecture"].is_string())
      return Error::Invalid("descriptor " + d.digest.str() + " has a malformed platform");
    d.platform = Platform{p["os"].get<std::string>(), p["architecture"].get<std::string>(), optString(p, "variant"),
                          optString(p, "os.version")};
  }
  return d;
}

Result<DocKind> detectKind(std::string_view bytes, std::string_view hint) {
  auto isIndexType = [](std::string_view mt) { return mt == media::kOciIndex || mt == media::kDockerList; };
  auto isManifestType = [](std::string_view mt) { return mt == media::kOciManifest || mt == media::kDockerManifest; };
  if (isIndexType(hint)) return DocKind::Index;
  if (isManifestType(hint)) return DocKind::Manifest;
  KDK_TRY_ASSIGN(json j, parseJson(bytes, "manifest"));
  std::string mt = optString(j, "mediaType");
  if (isIndexType(mt)) return DocKind::Index;
  if (isManifestType(mt)) return DocKind::Manifest;
  if (!mt.empty()) return Error::Unsupported("unsupported manifest media type '" + mt.substr(0, 100) + "'");
  if (j.contains("manifests")) return DocKind::Index;
  if (j.contains("config") && j.contains("layers")) return DocKind::Manifest;
  if (j.contains("schemaVersion") && j["schemaVersion"] == 1)
    return Error::Unsupported("Docker schema 1 manifests are not supported (deprecated)");
  return Error::Invalid("document is neither an image manifest nor an index");
}

Result<Manifest> parseManifest(std::string_view bytes) {
  KDK_TRY_ASSIGN(json j, parseJson(bytes, "manifest"));
  KDK_TRY_STATUS(checkSchemaVersion(j, "manifest"));
  Manifest m;
  m.mediaType = optString(j, "mediaType");
  if (!m.mediaType.empty() && m.mediaType != media::kOciManifest && m.mediaType != media::kDockerManifest)
    return Error::Invalid("manifest mediaType '" + m.mediaType.substr(0, 100) + "' is not an image manifest");
  if (m.mediaType.empty()) m.mediaType = media::kOciManifest;
  m.artifactType = optString(j, "artifactType");
  if (!j.contains("config")) return Error::Invalid("manifest has no config descriptor");
  KDK_TRY_ASSIGN(m.config, parseDescriptor(j["config"]));
  if (!j.contains("layers") || !j["layers"].is_array()) return Error::Invalid("manifest has no layers array");
  for (const auto& l : j["layers"]) {
    KDK_TRY_ASSIGN(Descriptor d, parseDescriptor(l));
    m.layers.push_back(std::move(d));
  }
  KDK_TRY_ASSIGN(m.annotations, stringMap(j, "annotations"));
  return m;
}

Result<Index> parseIndex(std::string_view bytes) {
  KDK_TRY_ASSIGN(json j, parseJson(bytes, "index"));
  KDK_TRY_STATUS(checkSchemaVersion(j, "index"));
  Index ix;
  ix.mediaType = optString(j, "mediaType");
  if (!ix.mediaType.empty() && ix.mediaType != media::kOciIndex && ix.mediaType != media::kDockerList)
    return Error::Invalid("index mediaType '" + ix.mediaType.substr(0, 100) + "' is not an image index");
  if (!j.contains("manifests") || !j["manifests"].is_array()) return Error::Invalid("index has no manifests array");
  for (const auto& m : j["manifests"]) {
    KDK_TRY_ASSIGN(Descriptor d, parseDescriptor(m));
    ix.manifests.push_back(std::move(d));
  }
  KDK_TRY_ASSIGN(ix.annotations, stringMap(j, "annotations"));
  return ix;
}

Result<ImageConfig> parseConfig(std::string_view bytes) {
  KDK_TRY_ASSIGN(json j, parseJson(bytes, "image config"));
  ImageConfig c;
  if (!j.contains("architecture") || !j["architecture"].is_string() || !j.contains("os") || !j["os"].is_string())
    return Error::Invalid("image config lacks architecture or os");
  c.platform = Platform{j["os"].get<std::string>(), j["architecture"].get<std::string>(), optString(j, "variant"),
                        optString(j, "os.version")};
  c.created = optString(j, "created");
  if (j.contains("config") && j["config"].is_object()) {
    const json& cc = j["config"];
    KDK_TRY_ASSIGN(c.env, stringList(cc, "Env"));
    KDK_TRY_ASSIGN(c.entrypoint, stringList(cc, "Entrypoint"));
    KDK_TRY_ASSIGN(c.cmd, stringList(cc, "Cmd"));
    KDK_TRY_ASSIGN(c.labels, stringMap(cc, "Labels"));
    c.user = optString(cc, "User");
    c.workingDir = optString(cc, "WorkingDir");
  } else if (j.contains("config") && !j["config"].is_null()) {
    return Error::Invalid("image config 'config' must be an object");
  }
  if (!j.contains("rootfs") || !j["rootfs"].is_object()) return Error::Invalid("image config has no rootfs");
  const json& rf = j["rootfs"];
  if (optString(rf, "type") != "layers") return Error::Invalid("image config rootfs.type must be 'layers'");
  // Docker leaves out an empty diff_ids (moby's RootFS.DiffIDs is omitempty): no layers.
  if (rf.contains("diff_ids") && !rf["diff_ids"].is_null() && !rf["diff_ids"].is_array())
    return Error::Invalid("image config rootfs.diff_ids must be an array");
  for (const auto& d : rf.value("diff_ids", json::array())) {
    if (!d.is_string()) return Error::Invalid("rootfs.diff_ids entries must be strings");
    KDK_TRY_ASSIGN(Digest dg, parseDigest(d.get<std::string>()));
    c.diffIds.push_back(dg);
  }
  if (j.contains("history") && j["history"].is_array()) c.history = j["history"];
  return c;
}

}  // namespace kernodeck::oci
