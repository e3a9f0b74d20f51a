// Audit reports attached to the images they audited: the kernodeck.report/v1 report, with the
// verdict, policy and signing time beside it (predicate.h), becomes the predicate of an in-toto
// Statement whose subject is the audited manifest, wrapped in a
// DSSE envelope (signed when a key is given), pushed as an OCI artifact
// (artifactType application/vnd.kernodeck.report.v1+json) whose `subject` is that manifest.
// Reading them back checks each artifact: its subject, its envelope, its statement's subject
// and, with a key, its signature; every problem is a finding, not an error. Which report
// decides is decision.h's.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/attest/dsse.h"
#include "kernodeck/attest/predicate.h"
#include "kernodeck/registry/client.h"
#include "kernodeck/report/report.h"

namespace kernodeck::attest {

inline constexpr const char* kReportArtifactType = "application/vnd.kernodeck.report.v1+json";

// Where an attach put the report: the OCI 1.1 referrer, and the layer of the cosign
// attestation image under the tag `sha256-<hex>.att` (see cosign_layout.h).
struct Attached {
  oci::Descriptor referrer;
  std::string cosignTag;
  oci::Digest cosignManifest;
};

// Attaches a report of a registry image (its subject names registry, repository and
// manifest_digest) to that manifest, as a referrer and in cosign's attestation layout; signs it
// with `key` when given. The statement's predicate (predicate.h) carries the verdict under
// `failOn` (the audit's --fail-on; -1: none) and the time of signing, now.
Result<Attached> attachReport(const nlohmann::json& report, const registry::ClientOptions& opts, const Key* key,
                              int failOn = static_cast<int>(report::Severity::Error));

struct AttachedReport {
  oci::Descriptor artifact;  // digest empty for an index entry that is not a valid descriptor
  std::map<std::string, std::string> annotations;
  std::optional<nlohmann::json> report;  // the audit report inside the predicate, when readable
  std::optional<ReportPredicate> predicate;
  std::string verdict;    // the predicate's (signed) verdict; empty when unreadable
  std::string signature;  // "verified", "invalid", "unsigned", "unchecked" (no key given)
  std::string keyid;      // of the first signature
  std::vector<report::Finding> problems;
};

// The most report referrers read for one image. Each costs a manifest and an envelope fetch, and
// whoever can push to the repository may list any number: past the bound the newest by their
// created annotation are read (what is left out is older than all that is read), the others are
// never fetched, and one entry whose only problem is report.referrers.too_many says how many.
constexpr size_t kMaxReportReferrers = 64;

// The reports attached to `manifest` in the client's repository (at most kMaxReportReferrers,
// the newest), each checked (the signature only with `key`). Every listed document is untrusted: one that is malformed
// or does not verify is kept with its problems (report.referrer.invalid, report.artifact.corrupt, ...) for the caller
// to name and skip. An error only when the referrers cannot be listed at all.
Result<std::vector<AttachedReport>> readReports(registry::Client& c, const oci::Digest& manifest, const Key* key);

}  // namespace kernodeck::attest
