// See run.h.
#include "kernodeck/fleet/run.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "kernodeck/attest/attached_report.h"
#include "kernodeck/audit/image_audit.h"
#include "kernodeck/audit/layer_reader.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/reference.h"
#include "kernodeck/registry/scan_store.h"
#include "kernodeck/version.h"

namespace kernodeck::fleet {

using nlohmann::json;

json RunOutcome::toJson() const {
  return {{"layers", {{"walked", layersWalked}, {"shared", layersShared}, {"failed", layersFailed}}},
          {"images", {{"audited", imagesAudited}, {"skipped", imagesSkipped}, {"failed", imagesFailed}}},
          {"complete", complete()},
          {"log", log}};
}

namespace {

// Whether the image already carries a good report of this analysis version (signed by the
// worker's key when it signs): then a rerun leaves it alone.
bool hasCurrentReport(const PlannedImage& img, const RunOptions& opts) {
  auto ref = registry::parseReference(img.ref());
  if (!ref.ok()) return false;
  registry::Client c(*ref, opts.registry);
  auto reports = attest::readReports(c, img.manifest.digest, opts.signKey);
  if (!reports.ok()) return false;
  // The analysis version as signed in the predicate (not the listing's annotation).
  for (const auto& r : *reports)
    if (r.problems.empty() && r.predicate && r.verdict != "incomplete" &&
        r.predicate->analysisVersion == kAnalysisVersion && (!opts.signKey || r.signature == "verified"))
      return true;
  return false;
}

}  // namespace

RunOutcome runShard(const Plan& plan, const RunOptions& opts) {
  RunOutcome out;
  audit::AuditOptions ao;
  ao.registry = opts.registry;
  ao.exceptions = opts.exceptions;
  if (!plan.platform.empty())
    if (auto p = oci::parsePlatform(plan.platform); p.ok()) ao.platform = *p;
  registry::ScanTrust trust{opts.cacheKeys, opts.signKey};
  if (opts.signKey) trust.trusted.push_back(opts.signKey);
  auto store = registry::openRegistryScanStore(plan.cacheRepo, opts.registry, trust);
  if (!store.ok()) {
    out.layersFailed++;
    out.log.push_back({{"error", store.error().message}});
    return out;
  }
  ao.sharedScans = *store;

  // 1. The layers this shard owns.
  for (const auto& l : plan.layers) {
    if (l.shard != opts.shard) continue;
    json entry = {{"layer", l.desc.digest.str()}, {"size", l.desc.size}};
    auto repo = registry::parseReference(l.repository);
    Result<bool> done = repo.ok() ? audit::prepareLayer(*repo, l.desc, ao) : Result<bool>(repo.error());
    if (!done.ok()) {
      out.layersFailed++;
      entry["error"] = done.error().message;
      std::fprintf(stderr, "kernodeck fleet run: layer %s: %s\n", l.desc.digest.str().c_str(),
                   done.error().message.c_str());
    } else {
      (*done ? out.layersShared : out.layersWalked)++;
      entry["status"] = *done ? "shared" : "walked";
      std::fprintf(stderr, "kernodeck fleet run: layer %s %s\n", l.desc.digest.str().c_str(),
                   *done ? "already shared" : "walked");
    }
    out.log.push_back(entry);
  }

  // 2. Its images, from the shared results; the layers other shards own are waited for.
  for (const auto& img : plan.images) {
    if (img.shard != opts.shard) continue;
    json entry = {{"image", img.ref()}};
    if (!opts.redo && hasCurrentReport(img, opts)) {
      out.imagesSkipped++;
      entry["status"] = "skipped";
      out.log.push_back(entry);
      std::fprintf(stderr, "kernodeck fleet run: image %s already has a report\n", img.ref().c_str());
      continue;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(opts.waitSeconds);
    oci::ScanOptions so = audit::layerScanOptions(ao);
    for (const auto& l : plan.layers) {
      bool used = false;
      for (const auto& d : img.layers) used = used || d == l.desc.digest;
      if (!used || l.shard == opts.shard) continue;
      while (!ao.sharedScans->has(l.desc, audit::layerWalkOptions(so, l.desc)) &&
             std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    audit::AuditResult res = audit::auditImage(img.ref(), ao);
    json rep = res.report.toJson();
    if (res.report.failed()) {
      // An incomplete audit is attached too: its report says what could not be read.
      entry["audit_error"] = res.report.firstError();
    }
    auto pushed = attest::attachReport(rep, opts.registry, opts.signKey);
    if (!pushed.ok()) {
      out.imagesFailed++;
      entry["error"] = pushed.error().message;
      std::fprintf(stderr, "kernodeck fleet run: image %s: %s\n", img.ref().c_str(), pushed.error().message.c_str());
    } else if (res.report.failed()) {
      out.imagesFailed++;
      entry["status"] = "incomplete";
      entry["report"] = pushed->referrer.digest.str();
    } else {
      out.imagesAudited++;
      entry["status"] = "audited";
      entry["verdict"] = attest::verdictOf(rep);
      entry["report"] = pushed->referrer.digest.str();
      std::fprintf(stderr, "kernodeck fleet run: image %s %s\n", img.ref().c_str(), attest::verdictOf(rep).c_str());
    }
    out.log.push_back(entry);
  }
  return out;
}

}  // namespace kernodeck::fleet
