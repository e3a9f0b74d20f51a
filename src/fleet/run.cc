// See run.h.
#include "kernodeck/fleet/run.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "kernodeck/attest/attached_report.h"
#include "kernodeck/attest/decision.h"
#include "kernodeck/audit/image_audit.h"
#include "kernodeck/audit/layer_reader.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/reference.h"
#include "kernodeck/registry/scan_store.h"
#include "kernodeck/util/time.h"
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

// "7d", "12h", "90m", "45s": the largest unit that divides the duration.
std::string durationText(int64_t s) {
  for (auto [unit, secs] : {std::pair{"d", 86400}, {"h", 3600}, {"m", 60}})
    if (s % secs == 0) return std::to_string(s / secs) + unit;
  return std::to_string(s) + "s";
}

// Whether the image's newest verified report (by signed time) is a completed audit of this
// analysis version, signed less than reauditOlderThanS before `nowMs` when that is set: then a
// rerun leaves it alone. `why` says why not when there is a report.
bool hasCurrentReport(const PlannedImage& img, const RunOptions& opts, int64_t nowMs, std::string* why) {
  auto ref = registry::parseReference(img.ref());
  if (!ref.ok()) return false;
  registry::Client c(*ref, opts.registry);
  auto reports = attest::readReports(c, img.manifest.digest, opts.signKey);
  if (!reports.ok()) return false;
  const attest::AttachedReport* newest = attest::newestGood(*reports);
  if (!newest || (opts.signKey && newest->signature != "verified")) return false;
  if (newest->verdict == "incomplete" || newest->predicate->analysisVersion != kAnalysisVersion) {
    *why = "its newest report is " + newest->verdict + " of analysis version " +
           std::to_string(newest->predicate->analysisVersion);
    return false;
  }
  if (opts.reauditOlderThanS && nowMs - newest->predicate->timeMs > *opts.reauditOlderThanS * 1000) {
    *why = "its newest report, signed " + newest->predicate->time + ", is older than " +
           durationText(*opts.reauditOlderThanS);
    return false;
  }
  return true;
}

}  // namespace

RunOutcome runShard(const Plan& plan, const RunOptions& opts) {
  RunOutcome out;
  const int64_t startMs = util::nowMs();  // report ages are judged as of the run's start
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
    std::string why;
    if (!opts.redo && hasCurrentReport(img, opts, startMs, &why)) {
      out.imagesSkipped++;
      entry["status"] = "skipped";
      out.log.push_back(entry);
      std::fprintf(stderr, "kernodeck fleet run: image %s already has a report\n", img.ref().c_str());
      continue;
    }
    if (!why.empty()) {
      entry["reaudit"] = why;
      std::fprintf(stderr, "kernodeck fleet run: image %s: %s: audited again\n", img.ref().c_str(), why.c_str());
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
