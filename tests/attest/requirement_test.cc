// What a node requires of the reports attached to its image (`probe --require-report`):
// the newest report without problems says pass. Table-driven over checked reports as
// readReports leaves them.
#include <gtest/gtest.h>

#include "kernodeck/attest/attached_report.h"

using namespace kernodeck;
using namespace kernodeck::attest;

namespace {

// A checked report: its verdict, creation time and, when `problem` is set, one problem.
AttachedReport checked(const std::string& verdict, const std::string& created, const std::string& problem = "") {
  AttachedReport a;
  a.artifact.digest = *oci::parseDigest("sha256:" + std::string(64, created.size() > 18 ? created[18] : '0'));
  a.annotations["org.opencontainers.image.created"] = created;
  a.verdict = verdict;
  a.report = nlohmann::json::object();
  a.signature = problem.empty() ? "verified" : "invalid";
  if (!problem.empty()) a.problems.push_back({problem, report::Severity::Error, "a problem", {}});
  return a;
}

int count(const Requirement& r, const std::string& code, report::Severity sev) {
  int n = 0;
  for (const auto& f : r.findings) n += f.code == code && f.severity == sev;
  return n;
}

}  // namespace

TEST(ReportRequirement, TheNewestGoodReportMustPass) {
  using S = report::Severity;
  struct Case {
    const char* what;
    std::vector<AttachedReport> reports;
    bool met;
    const char* code;  // the error finding when not met
  } cases[] = {
      {"nothing attached", {}, false, "probe.report.missing"},
      {"only a bad signature",
       {checked("pass", "2026-01-01T00:00:01Z", "report.signature.invalid")},
       false,
       "probe.report.unverified"},
      {"only another subject",
       {checked("pass", "2026-01-01T00:00:01Z", "report.subject.mismatch")},
       false,
       "probe.report.unverified"},
      {"a failed verdict", {checked("fail", "2026-01-01T00:00:01Z")}, false, "probe.report.failed"},
      {"an incomplete audit", {checked("incomplete", "2026-01-01T00:00:01Z")}, false, "probe.report.failed"},
      {"a pass", {checked("pass", "2026-01-01T00:00:01Z")}, true, ""},
      {"an older pass, a newer fail",
       {checked("pass", "2026-01-01T00:00:01Z"), checked("fail", "2026-01-02T00:00:02Z")},
       false,
       "probe.report.failed"},
      {"an older fail, a newer pass",
       {checked("fail", "2026-01-01T00:00:01Z"), checked("pass", "2026-01-02T00:00:02Z")},
       true,
       ""},
      {"a newer pass with a bad signature does not count",
       {checked("fail", "2026-01-01T00:00:01Z"), checked("pass", "2026-01-02T00:00:02Z", "report.signature.invalid")},
       false,
       "probe.report.failed"},
  };
  auto image = *oci::parseDigest("sha256:" + std::string(64, 'a'));
  for (const auto& c : cases) {
    Requirement r = requirePassingReport(c.reports, image);
    EXPECT_EQ(r.met, c.met) << c.what;
    int errors = 0;
    for (const auto& f : r.findings) errors += f.severity == S::Error && f.code.rfind("probe.report.", 0) == 0;
    if (c.met) {
      EXPECT_EQ(errors, 0) << c.what;
      EXPECT_NE(r.chosen, nullptr) << c.what;
    } else {
      EXPECT_EQ(errors, 1) << c.what;
      EXPECT_EQ(count(r, c.code, S::Error), 1) << c.what;
    }
  }
  // A met requirement keeps the other reports' problems, as warnings; an unmet one as errors.
  Requirement met = requirePassingReport(
      {checked("pass", "2026-01-02T00:00:02Z"), checked("pass", "2026-01-01T00:00:01Z", "report.signature.invalid")},
      image);
  EXPECT_TRUE(met.met);
  EXPECT_EQ(count(met, "report.signature.invalid", S::Warning), 1);
  Requirement unmet =
      requirePassingReport({checked("pass", "2026-01-01T00:00:01Z", "report.signature.invalid")}, image);
  EXPECT_EQ(count(unmet, "report.signature.invalid", S::Error), 1);
}
