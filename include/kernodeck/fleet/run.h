// One fleet worker (`fleet run --plan P --shard I`): walks the layers its shard owns and shares
// their results through the cache repository, then audits its images from the shared results
// and attaches each report to its image. Everything it does is kept in the registry, so a
// worker killed mid-shard and run again redoes only what is missing: a layer whose result is
// shared is not fetched again, and an image whose newest verified report is of this analysis
// version (and, with reauditOlderThanS, was signed less long ago than that) is not audited again.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/attest/dsse.h"
#include "kernodeck/fleet/plan.h"
#include "kernodeck/registry/client.h"
#include "kernodeck/report/exceptions.h"

namespace kernodeck::fleet {

struct RunOptions {
  int shard = 0;
  registry::ClientOptions registry;
  const attest::Key* signKey = nullptr;
  // Seconds to wait for the layers of its images that other shards own before walking one itself.
  double waitSeconds = 600;
  bool redo = false;  // audit and attach again even where a good report exists
  // Shared layer results count when signed by signKey or one of these (--cache-key); what the
  // worker shares is signed with signKey, without which it shares nothing.
  std::vector<const attest::Key*> cacheKeys;
  // --exceptions: applied to every image's report before it is signed (report/exceptions.h).
  std::vector<report::ExceptionsFile> exceptions = {};
  // Audit again an image whose newest verified report was signed longer ago than this, as of
  // the run's start (--reaudit-older-than): what keeps a gate's --max-age from expiring it.
  std::optional<int64_t> reauditOlderThanS = std::nullopt;
};

struct RunOutcome {
  int layersWalked = 0, layersShared = 0, layersFailed = 0;  // shared: a result was already there
  int imagesAudited = 0, imagesSkipped = 0, imagesFailed = 0;
  nlohmann::json log = nlohmann::json::array();  // one object per layer or image: what happened
  bool complete() const { return layersFailed == 0 && imagesFailed == 0; }
  nlohmann::json toJson() const;
};

RunOutcome runShard(const Plan& plan, const RunOptions& opts);

}  // namespace kernodeck::fleet
