// See predicate.h.
#include "kernodeck/attest/predicate.h"

#include "kernodeck/report/exceptions.h"
#include "kernodeck/report/report_doc.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/time.h"
#include "kernodeck/version.h"

namespace kernodeck::attest {

using nlohmann::json;

namespace {

const char* kSeverities[] = {"info", "warning", "error"};

std::string failOnName(int failOn) { return failOn < 0 || failOn > 2 ? "none" : kSeverities[failOn]; }

int failOnLevel(const std::string& name) {
  for (int i = -1; i <= 2; ++i)
    if (failOnName(i) == name) return i;
  return -2;
}

}  // namespace

std::string verdictOf(const json& r, int failOn) { return report::verdictOf(report::summaryOf(r), failOn); }

std::string reportBlob(const json& report) { return report.dump(); }

ReportPredicate makePredicate(const json& report, int failOn, int64_t timeMs) {
  ReportPredicate p;
  report::ReportSummary s = report::summaryOf(report);
  p.verdict = report::verdictOf(s, failOn);
  p.info = s.info;
  p.warning = s.warning;
  p.error = s.error;
  p.failOn = failOnName(failOn);
  p.kernodeckVersion = kVersion;
  p.analysisVersion = kAnalysisVersion;
  p.timeMs = timeMs;
  p.time = util::utcTimestampMs(timeMs);
  std::string bytes = reportBlob(report);
  p.report.mediaType = kReportBlobMediaType;
  p.report.digest = oci::Digest{"sha256", util::sha256Hex(bytes)};
  p.report.size = static_cast<int64_t>(bytes.size());
  p.exceptions = report::exceptionsSummary(report);
  if (report.contains("subject") && report["subject"].is_object()) {
    const json& sub = report["subject"];
    if (sub.contains("registry") && sub["registry"].is_string() && sub.contains("repository") &&
        sub["repository"].is_string())
      p.repository = sub["registry"].get<std::string>() + "/" + sub["repository"].get<std::string>();
  }
  return p;
}

json predicateJson(const ReportPredicate& p) {
  json j = {
      {"verdict", p.verdict},
      {"findings", {{"info", p.info}, {"warning", p.warning}, {"error", p.error}}},
      {"fail_on", p.failOn},
      {"kernodeck_version", p.kernodeckVersion},
      {"analysis_version", p.analysisVersion},
      {"time", p.time},
      {"report", {{"mediaType", p.report.mediaType}, {"digest", p.report.digest.str()}, {"size", p.report.size}}}};
  // What --exceptions waived (report/exceptions.h), signed beside the verdict; absent without.
  if (!p.exceptions.is_null()) j["exceptions"] = p.exceptions;
  if (!p.repository.empty()) j["repository"] = p.repository;
  return j;
}

Result<ReportPredicate> parsePredicate(const json& j) {
  if (!j.is_object()) return Error::Corrupt("predicate: not a JSON object");
  auto str = [&](const char* key, std::string& out) -> Status {
    if (!j.contains(key) || !j[key].is_string())
      return Error::Corrupt(std::string("predicate.") + key + ": missing or not a string");
    out = j[key].get<std::string>();
    return {};
  };
  ReportPredicate p;
  KDK_TRY_STATUS(str("verdict", p.verdict));
  KDK_TRY_STATUS(str("fail_on", p.failOn));
  KDK_TRY_STATUS(str("kernodeck_version", p.kernodeckVersion));
  KDK_TRY_STATUS(str("time", p.time));
  if (j.contains("repository")) KDK_TRY_STATUS(str("repository", p.repository));
  if (p.verdict != "pass" && p.verdict != "fail" && p.verdict != "incomplete")
    return Error::Corrupt("predicate.verdict: '" + p.verdict + "' is not pass, fail or incomplete");
  if (failOnLevel(p.failOn) == -2)
    return Error::Corrupt("predicate.fail_on: '" + p.failOn + "' is not info, warning, error or none");
  auto t = util::parseTimestampMs(p.time);
  if (!t) return Error::Corrupt("predicate.time: '" + p.time + "' is not an RFC 3339 timestamp");
  p.timeMs = *t;
  if (!j.contains("findings") || !j["findings"].is_object())
    return Error::Corrupt("predicate.findings: missing or not an object");
  int64_t* counts[] = {&p.info, &p.warning, &p.error};
  for (int i = 0; i < 3; ++i) {
    const json& f = j["findings"];
    if (!f.contains(kSeverities[i]) || !f[kSeverities[i]].is_number_integer() || f[kSeverities[i]].get<int64_t>() < 0)
      return Error::Corrupt(std::string("predicate.findings.") + kSeverities[i] + ": missing or not a count");
    *counts[i] = f[kSeverities[i]].get<int64_t>();
  }
  if (j.contains("analysis_version") && j["analysis_version"].is_number_integer())
    p.analysisVersion = j["analysis_version"].get<int64_t>();
  if (!j.contains("report") || !j["report"].is_object())
    return Error::Corrupt("predicate.report: missing or not an object");
  auto d = oci::parseDescriptor(j["report"]);
  if (!d.ok()) return Error::Corrupt("predicate.report: " + d.error().message);
  if (d->mediaType != kReportBlobMediaType)
    return Error::Corrupt("predicate.report: media type '" + d->mediaType + "' is not " + kReportBlobMediaType);
  if (d->digest.algorithm != "sha256") return Error::Corrupt("predicate.report: the digest is not sha256");
  if (d->size < 0 || static_cast<uint64_t>(d->size) > kMaxReportBlobBytes)
    return Error::Corrupt("predicate.report: size " + std::to_string(d->size) + " is over the bound of " +
                          std::to_string(kMaxReportBlobBytes) + " bytes");
  p.report = *d;
  if (j.contains("exceptions")) {
    if (!j["exceptions"].is_object()) return Error::Corrupt("predicate.exceptions: not an object");
    p.exceptions = j["exceptions"];
  }
  return p;
}

Result<json> checkReportBlob(const ReportPredicate& p, std::string_view bytes) {
  json r = util::parseUntrustedJson(bytes);
  if (!r.is_object()) return Error::Corrupt("the report blob " + p.report.digest.str() + " is not a JSON object");
  if (std::string v = verdictOf(r, failOnLevel(p.failOn)); v != p.verdict)
    return Error::Corrupt("the signed predicate says " + p.verdict + " but its report " + p.report.digest.str() +
                          " is " + v + " under fail_on " + p.failOn);
  return r;
}

}  // namespace kernodeck::attest
