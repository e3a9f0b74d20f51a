// The predicate of a Kernodeck report attestation (type kReportPredicateType): what a policy
// matches on, as top-level fields, and the digest of the whole audit report, which travels as a
// second blob of the artifact and is fetched only when asked (reports --fetch, fleet summary):
//
//   {"verdict": "pass", "findings": {"info": 1, "warning": 0, "error": 0},
//    "fail_on": "error", "kernodeck_version": "0.1.0", "analysis_version": 2,
//    "time": "2026-12-01T14:00:00.123Z",
//    "report": {"mediaType": "application/vnd.kernodeck.report.v1+json",
//               "digest": "sha256:...", "size": 12345}}
//
// `time` is when the report was signed: it is inside the signature, so it (not an annotation)
// orders the reports of an image. `verdict` is the report's under `fail_on`, the policy the
// audit ran with. What a gate reads is then a small envelope of bounded size whatever the report's
// size, so every report attached to an image can be read (docs/attestation.md says why).
// docs/attestation.md documents the fields for policy writers.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "kernodeck/oci/manifest.h"
#include "kernodeck/util/result.h"

namespace kernodeck::attest {

// v3: the predicate above. v2 (the whole report inside the signed predicate) and v1 (the report
// alone, no signed time) are recognised only to say that such a report does not count: a v2
// envelope has no size bound a gate could hold every report of an image to.
inline constexpr const char* kReportPredicateType = "https://kernodeck.dev/attestation/report/v3";
inline constexpr const char* kReportPredicateTypeV2 = "https://kernodeck.dev/attestation/report/v2";
inline constexpr const char* kReportPredicateTypeV1 = "https://kernodeck.dev/attestation/report/v1";

// The media type of the report blob the predicate's `report` descriptor names.
inline constexpr const char* kReportBlobMediaType = "application/vnd.kernodeck.report.v1+json";
// The largest report blob read (reports --fetch, fleet summary).
inline constexpr uint64_t kMaxReportBlobBytes = 64u << 20;

struct ReportPredicate {
  std::string verdict;  // pass | fail | incomplete
  int64_t info = 0, warning = 0, error = 0;
  std::string failOn;  // info | warning | error | none
  std::string kernodeckVersion;
  int64_t analysisVersion = 0;
  std::string time;  // RFC 3339 UTC, as signed
  int64_t timeMs = 0;
  oci::Descriptor report;  // the kernodeck.report/v1 blob (media type kReportBlobMediaType)
  // What the audit's --exceptions waived (report::exceptionsSummary, bounded); null without.
  nlohmann::json exceptions;
  // The audited repository, REGISTRY/REPOSITORY, as the statement's subject names it: for
  // admission policies that read only the predicate (Kyverno's ClusterPolicy conditions). Empty
  // for a report that names none; readers bind on the statement's subject, not on this.
  std::string repository;
};

// "pass", "fail" (a finding at or above `failOn`; -1: never) or "incomplete" (a step failed),
// from a kernodeck.report/v1 JSON report.
std::string verdictOf(const nlohmann::json& report, int failOn = 2);

// The bytes of the report blob: `report` serialised once (what the predicate's digest names).
std::string reportBlob(const nlohmann::json& report);
// The predicate of `report` audited under `failOn` (-1: none), signed at `timeMs`; its `report`
// descriptor names reportBlob(report).
ReportPredicate makePredicate(const nlohmann::json& report, int failOn, int64_t timeMs);
nlohmann::json predicateJson(const ReportPredicate& p);
// Reads a predicate someone attached (signed: only called after the signature verified):
// Corrupt naming the field that is missing, of the wrong type or out of range. Fields it does
// not know are ignored (later versions may add some).
Result<ReportPredicate> parsePredicate(const nlohmann::json& j);
// Checks a report blob fetched by the predicate's digest: its verdict under the predicate's
// `fail_on` must be the predicate's. Corrupt otherwise, or when it is not a JSON object.
Result<nlohmann::json> checkReportBlob(const ReportPredicate& p, std::string_view bytes);

}  // namespace kernodeck::attest
