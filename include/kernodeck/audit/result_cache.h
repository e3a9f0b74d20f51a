// The audit's result cache. The steps after "config" depend only on the image's content
// (the manifest pins every blob), the options and this build of Kernodeck, so their
// outcome is kept under a key of all three, as scanners keep an artifact's analysis
// (Trivy's artifact cache). Registry sources only, like the blob and per-layer caches;
// --reanalyze bypasses it. A cache: failing to keep an entry is not an error, and an
// entry that does not read back whole is ignored.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernodeck/audit/image_audit.h"
#include "kernodeck/gpu/expectation.h"
#include "kernodeck/oci/digest.h"
#include "kernodeck/report/report.h"

namespace kernodeck::audit {

// The steps whose outcome is kept, in order.
inline constexpr const char* kResultSteps[] = {"layers", "os", "os-packages", "python"};

// What those steps added to the report, and the expectation they derived.
struct StoredResult {
  std::vector<report::Step> steps;  // one per kResultSteps, passed or skipped
  nlohmann::json sections = nlohmann::json::object();
  std::vector<report::Finding> findings;
  gpu::Expectation expectation;
};

// The entry's file under `cacheDir` for the analysis of the image whose manifest and config
// are `manifest` and `config` under `opts` by this binary; empty when it cannot be keyed (a
// requirement file or this binary unreadable).
std::string resultPath(const std::string& cacheDir, const oci::Digest& manifest, const oci::Digest& config,
                       const AuditOptions& opts);

void storeResult(const std::string& path, const StoredResult& result);

// The entry at `path`; nullopt when there is none, or it does not parse whole, or a step in it
// did anything but pass or skip.
std::optional<StoredResult> loadResult(const std::string& path);

}  // namespace kernodeck::audit
