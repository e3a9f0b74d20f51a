// See index_walk.h.
#include "kernodeck/oci/index_walk.h"

#include "kernodeck/oci/platform.h"

namespace kernodeck::oci {

std::string chainText(const std::vector<Descriptor>& chain) {
  std::string s;
  for (const auto& d : chain) s += (s.empty() ? "" : " -> ") + d.digest.str();
  return s;
}

Result<ManifestChoice> chooseManifest(const Descriptor& top, const std::string& topBytes, const Platform& want,
                                      const DocumentReader& read, const IndexVisitor& onIndex) {
  ManifestChoice c;
  Descriptor d = top;
  std::string bytes = topBytes;
  for (;;) {
    KDK_TRY_ASSIGN(DocKind kind, detectKind(bytes, d.mediaType));
    if (kind == DocKind::Manifest) break;
    for (const auto& seen : c.chain)
      if (seen.digest == d.digest)
        return Error::Invalid("image index " + d.digest.str() + " lists itself (index chain " + chainText(c.chain) +
                              " -> " + d.digest.str() + "): a cycle no runtime can resolve");
    c.chain.push_back(d);
    if (c.chain.size() > kMaxIndexDepth)
      return Error::Invalid("image indexes nest deeper than " + std::to_string(kMaxIndexDepth) + " (index chain " +
                            chainText(c.chain) + ")");
    if (c.chain.size() > 1 && onIndex) onIndex(d, bytes);
    auto index = parseIndex(bytes);
    if (!index.ok()) return Error::Invalid("index " + d.digest.str() + ": " + index.error().message);
    auto pick = selectPlatform(*index, want);
    if (!pick.ok()) return pick.error().context("index " + d.digest.str());
    d = index->manifests[*pick];
    KDK_TRY_ASSIGN(bytes, read(d, "manifest"));
  }
  c.manifest = d;
  c.bytes = std::move(bytes);
  if (c.chain.empty()) return c;
  if (d.platform) {
    c.platformFrom = PlatformFrom::Index;
    c.platform = normalize(*d.platform);
    return c;
  }
  // An entry without a platform: containerd reads its config and takes it when the config's
  // os/architecture match, and otherwise finds no manifest (it tries no other entry).
  auto m = parseManifest(c.bytes);
  if (!m.ok()) return Error::Invalid("manifest " + d.digest.str() + ": " + m.error().message);
  if (!imageConfigType(m->config.mediaType))
    return Error::NotFound("index " + c.chain.back().digest.str() + " has no manifest for platform " +
                           normalize(want).str() + ": the entry followed, " + d.digest.str() +
                           ", names no platform and is not an image (config type " + m->config.mediaType + ")");
  KDK_TRY_ASSIGN(std::string cbytes, read(m->config, "config"));
  auto cfg = parseConfig(cbytes);
  if (!cfg.ok()) return Error::Invalid("config " + m->config.digest.str() + ": " + cfg.error().message);
  Platform have = normalize(Platform{cfg->platform.os, cfg->platform.architecture, "", ""});
  Platform w = normalize(want);
  if (have.os != w.os || have.architecture != w.architecture)
    return Error::NotFound("index " + c.chain.back().digest.str() + " has no manifest for platform " + w.str() +
                           ": the entry followed (the first that names no platform, as containerd chooses), " +
                           d.digest.str() + ", has a config for " + have.os + "/" + have.architecture +
                           "; containerd tries no other entry and refuses the image, and so does the audit");
  c.platformFrom = PlatformFrom::Config;
  c.platform = normalize(cfg->platform);
  return c;
}

}  // namespace kernodeck::oci
