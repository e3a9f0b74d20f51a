// The predicate of a Kernodeck report attestation (type kReportPredicateType): what a policy
// matches on, as top-level fields, and the whole audit report beside them.
//
//   {"verdict": "pass", "findings": {"info": 1, "warning": 0, "error": 0},
//    "fail_on": "error", "kernodeck_version": "0.1.0", "analysis_version": 2,
//    "time": "2026-12-01T14:00:00.123Z", "report": {kernodeck.report/v1}}
//
// `time` is when the report was signed: it is inside the signature, so it (not an annotation)
// orders the reports of an image. `verdict` is the report's under `fail_on`, the policy the
// audit ran with. docs/attestation.md documents the fields for policy writers.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "kernodeck/util/result.h"

namespace kernodeck::attest {

// v2: the predicate above. v1 (the report alone, no signed time) is recognised only to say
// that such a report cannot be ordered and does not count.
inline constexpr const char* kReportPredicateType = "https://kernodeck.dev/attestation/report/v2";
inline constexpr const char* kReportPredicateTypeV1 = "https://kernodeck.dev/attestation/report/v1";

struct ReportPredicate {
  std::string verdict;  // pass | fail | incomplete
  int64_t info = 0, warning = 0, error = 0;
  std::string failOn;  // info | warning | error | none
  std::string kernodeckVersion;
  int64_t analysisVersion = 0;
  std::string time;  // RFC 3339 UTC, as signed
  int64_t timeMs = 0;
  nlohmann::json report;  // kernodeck.report/v1
};

// "pass", "fail" (a finding at or above `failOn`; -1: never) or "incomplete" (a step failed),
// from a kernodeck.report/v1 JSON report.
std::string verdictOf(const nlohmann::json& report, int failOn = 2);

// The predicate of `report` audited under `failOn` (-1: none), signed at `timeMs`.
ReportPredicate makePredicate(const nlohmann::json& report, int failOn, int64_t timeMs);
nlohmann::json predicateJson(const ReportPredicate& p);
// Reads a predicate someone attached: Corrupt naming the field that is missing, of the wrong
// type or out of range, or when the verdict is not the report's under `fail_on`.
Result<ReportPredicate> parsePredicate(const nlohmann::json& j);

}  // namespace kernodeck::attest
