// See plan.h.
#include "kernodeck/fleet/plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>

#include "kernodeck/oci/image_ref.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/reference.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/util/json_read.h"

namespace kernodeck::fleet {

using nlohmann::json;

namespace {

json descJson(const oci::Descriptor& d) {
  return {{"mediaType", d.mediaType}, {"digest", d.digest.str()}, {"size", d.size}};
}

}  // namespace

json Plan::toJson() const {
  json imgs = json::array(), lays = json::array();
  for (const auto& i : images) {
    json layerList = json::array();
    for (const auto& l : i.layers) layerList.push_back(l.str());
    imgs.push_back({{"repository", i.repository},
                    {"tags", i.tags},
                    {"manifest", descJson(i.manifest)},
                    {"layers", layerList},
                    {"shard", i.shard}});
  }
  for (const auto& l : layers)
    lays.push_back({{"layer", descJson(l.desc)}, {"repository", l.repository}, {"shard", l.shard}});
  return {{"schema", kSchema},           {"shards", shards}, {"cache_repo", cacheRepo}, {"platform", platform},
          {"shard_bytes", shardBytes()}, {"images", imgs},   {"layers", lays}};
}

std::vector<uint64_t> Plan::shardBytes() const {
  std::vector<uint64_t> bytes(static_cast<size_t>(std::max(shards, 1)), 0);
  for (const auto& l : layers)
    if (l.shard >= 0 && l.shard < shards) bytes[static_cast<size_t>(l.shard)] += static_cast<uint64_t>(l.desc.size);
  return bytes;
}

Result<Plan> parsePlan(std::string_view text) {
  json j = util::parseUntrustedJson(text);
  if (!j.is_object() || j.value("schema", "") != Plan::kSchema)
    return Error::Invalid(std::string("not a ") + Plan::kSchema + " plan");
  try {
    Plan p;
    p.shards = j.at("shards").get<int>();
    p.cacheRepo = j.at("cache_repo").get<std::string>();
    p.platform = j.value("platform", "");
    if (p.shards < 1 || p.shards > 100000)
      return Error::Invalid("the plan's shard count " + std::to_string(p.shards) + " is out of range");
    for (const auto& i : j.at("images")) {
      PlannedImage img;
      img.repository = i.at("repository").get<std::string>();
      img.tags = i.value("tags", std::vector<std::string>{});
      KDK_TRY_ASSIGN(img.manifest, oci::parseDescriptor(i.at("manifest")));
      for (const auto& l : i.at("layers")) {
        KDK_TRY_ASSIGN(oci::Digest d, oci::parseDigest(l.get<std::string>()));
        img.layers.push_back(d);
      }
      img.shard = i.at("shard").get<int>();
      if (img.shard < 0 || img.shard >= p.shards)
        return Error::Invalid("image " + img.ref() + " has shard " + std::to_string(img.shard));
      p.images.push_back(std::move(img));
    }
    for (const auto& l : j.at("layers")) {
      PlannedLayer pl;
      KDK_TRY_ASSIGN(pl.desc, oci::parseDescriptor(l.at("layer")));
      pl.repository = l.at("repository").get<std::string>();
      pl.shard = l.at("shard").get<int>();
      if (pl.shard < 0 || pl.shard >= p.shards)
        return Error::Invalid("layer " + pl.desc.digest.str() + " has shard " + std::to_string(pl.shard));
      p.layers.push_back(std::move(pl));
    }
    return p;
  } catch (const json::exception& e) {
    return Error::Invalid(std::string("malformed fleet plan: ") + e.what());
  }
}

void assignShards(Plan& plan) {
  int n = std::max(plan.shards, 1);
  // Largest first, each to the least loaded shard (ties: the lowest index): within 4/3 of the best.
  std::vector<size_t> order(plan.layers.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (plan.layers[a].desc.size != plan.layers[b].desc.size)
      return plan.layers[a].desc.size > plan.layers[b].desc.size;
    return plan.layers[a].desc.digest < plan.layers[b].desc.digest;
  });
  std::vector<uint64_t> load(static_cast<size_t>(n), 0);
  for (size_t i : order) {
    size_t best = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    plan.layers[i].shard = static_cast<int>(best);
    load[best] += static_cast<uint64_t>(std::max<int64_t>(plan.layers[i].desc.size, 0));
  }
  for (size_t i = 0; i < plan.images.size(); ++i) plan.images[i].shard = static_cast<int>(i % static_cast<size_t>(n));
}

Result<std::vector<std::string>> readRefList(const std::string& path) {
  KDK_TRY_ASSIGN(std::string text, util::readFileLimited(path, 64u << 20));
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::string t(util::trim(line.substr(0, line.find('#'))));
    if (!t.empty()) out.push_back(t);
  }
  return out;
}

Result<std::vector<std::string>> catalogRefs(const std::string& registryPrefix, const std::string& cacheRepo,
                                             const registry::ClientOptions& opts) {
  size_t slash = registryPrefix.find('/');
  std::string host = registryPrefix.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : registryPrefix.substr(slash + 1);
  if (host.empty()) return Error::Invalid("--catalog takes REGISTRY[/PREFIX]");
  registry::Reference root{host, "", "latest", std::nullopt, false};
  registry::Client c(root, opts);
  KDK_TRY_ASSIGN(std::vector<std::string> repos, c.catalog());
  std::vector<std::string> out;
  for (const auto& repo : repos) {
    if (!prefix.empty() && repo != prefix && repo.rfind(prefix + "/", 0) != 0) continue;
    if (host + "/" + repo == cacheRepo) continue;
    registry::Client rc(registry::Reference{host, repo, "latest", std::nullopt, false}, opts);
    KDK_TRY_ASSIGN(std::vector<std::string> tags, rc.tags());
    std::sort(tags.begin(), tags.end());
    for (const auto& t : tags) {
      // The referrers tag schema's "<alg>-<hex>" tags name indexes of artifacts, not images.
      if (t.rfind("sha256-", 0) == 0 || t.rfind("sha512-", 0) == 0) continue;
      out.push_back(host + "/" + repo + ":" + t);
    }
  }
  return out;
}

Result<Plan> makePlan(const std::vector<std::string>& refs, int shards, const std::string& cacheRepo,
                      const oci::Platform& platform, const registry::ClientOptions& opts) {
  Plan plan;
  plan.shards = shards;
  plan.cacheRepo = cacheRepo;
  plan.platform = oci::normalize(platform).str();
  std::map<std::string, size_t> imageAt;  // repository@digest -> index
  std::map<std::string, size_t> layerAt;  // digest -> index
  for (const auto& raw : refs) {
    KDK_TRY_ASSIGN(oci::ResolvedRef named, oci::resolveImageRef(raw, oci::RefUse::RegistryOnly));
    KDK_TRY_ASSIGN(registry::Reference ref, registry::parseReference(named.ref.registryName()));
    registry::Client c(ref, opts);
    auto manifest = registry::resolveImageManifest(c, ref.digest ? ref.digest->str() : ref.tag, platform);
    if (!manifest.ok()) return manifest.error().context(raw);
    std::string repository = ref.registry + "/" + ref.repository;
    std::string key = repository + "@" + manifest->digest.str();
    if (auto it = imageAt.find(key); it != imageAt.end()) {
      if (ref.tagGiven || !ref.digest) plan.images[it->second].tags.push_back(ref.tag);
      continue;
    }
    KDK_TRY_ASSIGN(registry::Manifest bytes, c.manifest(manifest->digest.str()));
    auto m = oci::parseManifest(bytes.bytes);
    if (!m.ok()) return Error::Invalid(raw + ": manifest " + manifest->digest.str() + ": " + m.error().message);
    PlannedImage img;
    img.repository = repository;
    if (ref.tagGiven || !ref.digest) img.tags.push_back(ref.tag);
    img.manifest = *manifest;
    img.manifest.platform.reset();
    img.manifest.annotations.clear();
    for (const auto& l : m->layers) {
      img.layers.push_back(l.digest);
      if (layerAt.count(l.digest.str())) continue;
      layerAt[l.digest.str()] = plan.layers.size();
      oci::Descriptor d = l;
      d.annotations.clear();
      plan.layers.push_back({d, repository, 0});
    }
    imageAt[key] = plan.images.size();
    plan.images.push_back(std::move(img));
  }
  assignShards(plan);
  return plan;
}

}  // namespace kernodeck::fleet
