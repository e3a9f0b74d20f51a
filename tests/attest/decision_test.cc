// Which attached report decides (attest::decide, the rule of `reports` and of
// `probe --require-report`): reports are ordered by their signed time, never by an annotation;
// a verified fail as new as the newest verified pass or newer blocks it; reports older than the
// maximum age and reports with problems do not count. Table-driven over checked reports as
// readReports leaves them.
#include "kernodeck/attest/decision.h"

#include <gtest/gtest.h>

#include "kernodeck/util/time.h"

namespace attest_decision_test {

using namespace kernodeck;
using namespace kernodeck::attest;

namespace {

int64_t at(const char* t) { return *util::parseTimestampMs(t); }

// A checked report: its verdict, signed time, an (unsigned) created annotation and, when
// `problem` is set, one problem.
AttachedReport checked(const std::string& verdict, const char* signedAt, const std::string& problem = "",
                       const std::string& created = "") {
  static int n = 0;
  AttachedReport a;
  char hex[65];
  std::snprintf(hex, sizeof hex, "%064x", ++n);
  a.artifact.digest = *oci::parseDigest(std::string("sha256:") + hex);
  a.annotations["org.opencontainers.image.created"] = created.empty() ? signedAt : created;
  a.verdict = verdict;
  a.report = nlohmann::json::object();
  a.signature = problem.empty() ? "verified" : "invalid";
  if (problem.empty()) {
    a.predicate = ReportPredicate{};
    a.predicate->verdict = verdict;
    a.predicate->time = signedAt;
    a.predicate->timeMs = at(signedAt);
  } else {
    a.problems.push_back({problem, report::Severity::Error, "a problem", {}});
  }
  return a;
}

int count(const Decision& d, const std::string& code, report::Severity sev) {
  int n = 0;
  for (const auto& f : d.findings) n += f.code == code && f.severity == sev;
  return n;
}

const char* T1 = "2026-01-01T00:00:01.000Z";
const char* T2 = "2026-01-02T00:00:02.000Z";
const char* T3 = "2026-01-03T00:00:03.000Z";

}  // namespace

TEST(ReportDecision, TheNewestSignedReportDecides) {
  using S = report::Severity;
  struct Case {
    const char* what;
    std::vector<AttachedReport> reports;
    Outcome outcome;
    int chosen;  // index of the deciding report, -1: none
  } cases[] = {
      {"nothing attached", {}, Outcome::Missing, -1},
      {"only a bad signature", {checked("pass", T1, "report.signature.invalid")}, Outcome::Unverified, -1},
      {"only another subject", {checked("pass", T1, "report.subject.mismatch")}, Outcome::Unverified, -1},
      {"a failed verdict", {checked("fail", T1)}, Outcome::Failed, 0},
      {"an incomplete audit", {checked("incomplete", T1)}, Outcome::Failed, 0},
      {"a pass", {checked("pass", T1)}, Outcome::Pass, 0},
      {"an older pass, a newer fail", {checked("pass", T1), checked("fail", T2)}, Outcome::Failed, 1},
      {"an older fail, a newer pass", {checked("fail", T1), checked("pass", T2)}, Outcome::Pass, 1},
      {"a fail and a pass signed at the same time", {checked("pass", T2), checked("fail", T2)}, Outcome::Failed, 1},
      {"a newer incomplete audit says nothing", {checked("pass", T1), checked("incomplete", T2)}, Outcome::Pass, 0},
      {"a newer pass with a bad signature does not count",
       {checked("fail", T1), checked("pass", T2, "report.signature.invalid")},
       Outcome::Failed,
       0},
      // The replay: an older signed pass re-pushed with a created annotation in 2099 after a
      // newer signed fail. The annotation is not signed and orders nothing.
      {"an older pass re-pushed with created=2099",
       {checked("fail", T2), checked("pass", T1, "", "2099-01-01T00:00:00Z")},
       Outcome::Failed,
       0},
      {"the newest pass of several, with an older fail between",
       {checked("pass", T1), checked("fail", T2), checked("pass", T3)},
       Outcome::Pass,
       2},
  };
  auto image = *oci::parseDigest("sha256:" + std::string(64, 'a'));
  for (const auto& c : cases) {
    Decision d = decide(c.reports, image, {at(T3) + 1000, std::nullopt, "probe.report"});
    EXPECT_EQ(d.outcome, c.outcome) << c.what << ": " << outcomeName(d.outcome);
    EXPECT_EQ(d.met(), c.outcome == Outcome::Pass) << c.what;
    EXPECT_EQ(d.chosen, c.chosen < 0 ? nullptr : &c.reports[c.chosen]) << c.what;
    int errors = 0;
    for (const auto& f : d.findings) errors += f.severity == S::Error && f.code.rfind("probe.report.", 0) == 0;
    EXPECT_EQ(errors, d.met() ? 0 : 1) << c.what;
    if (!d.met()) {
      EXPECT_EQ(count(d, std::string("probe.report.") + outcomeName(c.outcome), S::Error), 1) << c.what;
    }
  }
  // A met decision keeps the other reports' problems, as warnings; an unmet one as errors.
  Decision met = decide({checked("pass", T2), checked("pass", T1, "report.signature.invalid")}, image,
                        {at(T3), std::nullopt, "probe.report"});
  EXPECT_TRUE(met.met());
  EXPECT_EQ(count(met, "report.signature.invalid", S::Warning), 1);
  Decision unmet = decide({checked("pass", T1, "report.signature.invalid")}, image, {at(T3), std::nullopt, "report"});
  EXPECT_EQ(count(unmet, "report.signature.invalid", S::Error), 1);
  EXPECT_EQ(count(unmet, "report.unverified", S::Error), 1);  // the caller's prefix
}

TEST(ReportDecision, ReportsOlderThanTheMaximumAgeDoNotCount) {
  using S = report::Severity;
  auto image = *oci::parseDigest("sha256:" + std::string(64, 'a'));
  int64_t now = at(T3);
  // A day and a half after T1, a day after T2.
  DecisionPolicy oneDay{now, 86400 + 3600, "probe.report"};
  std::vector<AttachedReport> old = {checked("pass", T1)};
  Decision expired = decide(old, image, oneDay);
  EXPECT_EQ(expired.outcome, Outcome::Expired);
  EXPECT_EQ(count(expired, "probe.report.expired", S::Error), 1);
  EXPECT_EQ(count(expired, "report.age.exceeded", S::Info), 1);
  EXPECT_TRUE(decide(old, image, {now, std::nullopt, "probe.report"}).met());
  // An expired fail does not block a younger pass; an expired pass does not outweigh a young fail.
  std::vector<AttachedReport> mixed = {checked("fail", T1), checked("pass", T2)};
  Decision d = decide(mixed, image, oneDay);
  EXPECT_TRUE(d.met());
  EXPECT_EQ(d.chosen, &mixed[1]);
  std::vector<AttachedReport> young = {checked("pass", T1), checked("fail", T2)};
  EXPECT_EQ(decide(young, image, oneDay).outcome, Outcome::Failed);
  // Too strict for both: expired, not failed.
  EXPECT_EQ(decide(young, image, {now, 3600, "probe.report"}).outcome, Outcome::Expired);
}

TEST(ReportDecision, NewestGoodIsBySignedTime) {
  std::vector<AttachedReport> r = {checked("pass", T2, "", "2026-01-01T00:00:00Z"),
                                   checked("fail", T1, "", "2099-01-01T00:00:00Z")};
  EXPECT_EQ(newestGood(r), &r[0]);
  EXPECT_EQ(newestGood({}), nullptr);
}

TEST(ReportDecision, AReportSignedForTheFutureDoesNotCount) {
  using S = report::Severity;
  auto image = *oci::parseDigest("sha256:" + std::string(64, 'a'));
  int64_t now = at(T2);
  // A pass signed a day ahead of this clock, a fail signed now: the fail decides, the pass is named.
  std::vector<AttachedReport> r = {checked("pass", T3), checked("fail", T2)};
  Decision d = decide(r, image, {now, std::nullopt, "probe.report"});
  EXPECT_EQ(d.outcome, Outcome::Failed);
  EXPECT_EQ(d.chosen, &r[1]);
  EXPECT_EQ(count(d, "report.time.future", S::Error), 1);
  // Within the skew (default 5 minutes) it counts; a wider --max-clock-skew lets it count.
  EXPECT_TRUE(decide({checked("pass", T2)}, image, {now - 299000, std::nullopt, "probe.report"}).met());
  EXPECT_FALSE(decide({checked("pass", T2)}, image, {now - 301000, std::nullopt, "probe.report"}).met());
  DecisionPolicy wide{now, std::nullopt, "probe.report"};
  wide.maxClockSkewS = 2 * 86400;
  EXPECT_EQ(decide(r, image, wide).chosen, &r[0]);
  // A fail signed ahead of this clock still blocks an older pass: the signer said fail.
  std::vector<AttachedReport> futureFail = {checked("pass", T1), checked("fail", T3)};
  Decision f = decide(futureFail, image, {now, std::nullopt, "probe.report"});
  EXPECT_EQ(f.outcome, Outcome::Failed);
  EXPECT_EQ(f.chosen, &futureFail[1]);
  EXPECT_EQ(count(f, "report.time.future", S::Error), 1);
  // Even past the maximum age of the pass's side: a future fail is never "expired".
  EXPECT_EQ(decide(futureFail, image, {now, 3600, "probe.report"}).outcome, Outcome::Failed);
}

TEST(ReportDecision, OnlyAVerifiedSignatureCountsAndTheBoundBlocks) {
  using S = report::Severity;
  auto image = *oci::parseDigest("sha256:" + std::string(64, 'a'));
  // Without a key a report is "unchecked" or "unsigned": listed, never a pass.
  std::vector<AttachedReport> r = {checked("pass", T1), checked("pass", T2)};
  r[0].signature = "unchecked";
  r[1].signature = "unsigned";
  DecisionPolicy noKey{at(T3), std::nullopt, "report"};
  noKey.keyGiven = false;
  Decision d = decide(r, image, noKey);
  EXPECT_EQ(d.outcome, Outcome::Unverified);
  EXPECT_EQ(count(d, "report.unverified", S::Error), 1);
  EXPECT_EQ(d.chosen, nullptr);
  // A listing past the bounds blocks a verified pass, and newestGood gives nothing.
  std::vector<AttachedReport> many = {checked("pass", T2), AttachedReport{}};
  many[1].blocksAll = true;
  many[1].problems.push_back({"report.referrers.too_many", S::Error, "too many", {}});
  Decision b = decide(many, image, {at(T3), std::nullopt, "probe.report"});
  EXPECT_EQ(b.outcome, Outcome::TooMany);
  EXPECT_FALSE(b.met());
  EXPECT_EQ(count(b, "probe.report.too_many", S::Error), 1);
  EXPECT_EQ(count(b, "report.referrers.too_many", S::Error), 1);
  EXPECT_EQ(newestGood(many), nullptr);
}

}  // namespace attest_decision_test
