// The check behind `probe --require-report` and `gate`: the image a pod runs must carry a report
// attached by `kernodeck audit --attach --sign-key`, signed by the required key, about this
// image, that decides pass. It reads the attached reports as `kernodeck reports` does
// (readReports) and judges them by the same rule (decide), so the two cannot disagree.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernodeck/attest/decision.h"
#include "kernodeck/attest/dsse.h"
#include "kernodeck/registry/client.h"
#include "kernodeck/registry/reference.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/report/report.h"

namespace kernodeck::attest {

// What the check asks of which image.
struct RequiredReport {
  registry::Reference image;                      // named by digest (the caller refuses a tag)
  oci::Platform platform;                         // the manifest judged when `image` is an index
  registry::ClientOptions registry;               // how to ask the registry
  std::shared_ptr<const Key> key;                 // the reports must be signed by it; never null
  int64_t maxAgeS = 0;                            // a report signed longer ago does not count; 0: any age
  int64_t maxClockSkewS = kDefaultMaxClockSkewS;  // a report signed further ahead does not count
  // Repositories (globs) whose signed verdicts also count for `image`'s (--trust-repository):
  // mirrors, allowed explicitly; by default only a report signed for `image`'s repository counts.
  std::vector<std::string> trustedRepositories;
};

// Reads and checks the reports attached to `req.image` and decides (findings probe.report.*,
// each report's problems): what it found goes to `r`'s section attached_report (image, keyid,
// manifest_digest, reports, met, outcome, max_age_seconds, chosen) and the decision's findings
// to `r`. An error only when the registry cannot be asked (the manifest cannot be resolved, the
// referrers cannot be listed).
Status checkRequiredReport(const RequiredReport& req, report::Report& r);

}  // namespace kernodeck::attest
