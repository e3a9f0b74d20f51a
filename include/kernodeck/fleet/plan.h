// The fleet plan (kernodeck.fleet-plan/v1): the images to audit, resolved to manifest digests
// and deduplicated, their unique layers, and which worker (shard) does what. Layers are
// spread over the shards balanced by bytes (largest first, each to the least loaded shard),
// so that every unique layer is walked by exactly one worker; then the images, balanced by
// count. A Kubernetes Indexed Job runs one `fleet run` per shard, the registry being the only
// thing they share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernodeck/oci/manifest.h"
#include "kernodeck/registry/client.h"

namespace kernodeck::fleet {

struct PlannedLayer {
  oci::Descriptor desc;
  std::string repository;  // "registry/repo" it is fetched from (the first image that has it)
  int shard = 0;
};

struct PlannedImage {
  std::string repository;           // "registry/repo"
  std::vector<std::string> tags;    // every tag of the plan's input that names this manifest
  oci::Descriptor manifest;         // the platform manifest audited
  std::vector<oci::Digest> layers;  // in order
  int shard = 0;
  std::string ref() const { return repository + "@" + manifest.digest.str(); }
};

struct Plan {
  static constexpr const char* kSchema = "kernodeck.fleet-plan/v1";
  int shards = 1;
  std::string cacheRepo;  // REGISTRY/REPO of the shared layer results
  std::string platform;   // "linux/amd64"
  std::vector<PlannedImage> images;
  std::vector<PlannedLayer> layers;

  nlohmann::json toJson() const;
  // Bytes of layers per shard.
  std::vector<uint64_t> shardBytes() const;
};

// Parses a plan written by toJson(); Invalid for anything else.
Result<Plan> parsePlan(std::string_view text);

// Assigns layers (by bytes) and then images (by count) to `shards` shards; pure.
void assignShards(Plan& plan);

// Reads image references from a file: one per line, blank lines and '#' comments ignored.
Result<std::vector<std::string>> readRefList(const std::string& path);

// Every tag of the repositories under REGISTRY[/PREFIX] (`_catalog`, then `tags/list`), as
// references; the referrers fallback tags and Kernodeck's own cache repository are left out.
Result<std::vector<std::string>> catalogRefs(const std::string& registryPrefix, const std::string& cacheRepo,
                                             const registry::ClientOptions& opts);

// Resolves the references (tags to digests, indexes to `platform`'s manifest), dedupes the
// manifests and layers, and assigns the shards. An unresolvable reference is an error.
Result<Plan> makePlan(const std::vector<std::string>& refs, int shards, const std::string& cacheRepo,
                      const oci::Platform& platform, const registry::ClientOptions& opts);

}  // namespace kernodeck::fleet
