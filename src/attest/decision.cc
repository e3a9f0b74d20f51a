// See decision.h.
#include "kernodeck/attest/decision.h"

#include "kernodeck/util/time.h"

namespace kernodeck::attest {

using report::Severity;

const char* outcomeName(Outcome o) {
  switch (o) {
    case Outcome::Pass: return "pass";
    case Outcome::Missing: return "missing";
    case Outcome::Unverified: return "unverified";
    case Outcome::Expired: return "expired";
    case Outcome::Failed: return "failed";
    case Outcome::TooMany: return "too_many";
  }
  return "?";
}

namespace {

bool counts(const AttachedReport& r) { return r.problems.empty() && r.predicate.has_value(); }

bool blocked(const std::vector<AttachedReport>& reports) {
  for (const auto& r : reports)
    if (r.blocksAll) return true;
  return false;
}

// Newer by signed time; on a tie, the one that is not a pass (never a pass by luck of order).
bool newer(const AttachedReport& a, const AttachedReport* than) {
  if (!than) return true;
  if (a.predicate->timeMs != than->predicate->timeMs) return a.predicate->timeMs > than->predicate->timeMs;
  return a.verdict != "pass" && than->verdict == "pass";
}

std::string age(int64_t ms) {
  int64_t s = ms / 1000;
  if (s >= 2 * 86400) return std::to_string(s / 86400) + " days";
  if (s >= 2 * 3600) return std::to_string(s / 3600) + " hours";
  if (s >= 120) return std::to_string(s / 60) + " minutes";
  return std::to_string(s) + " seconds";
}

// The error that says why `out` (not met) is not a pass: PREFIX.<outcome>.
report::Finding outcomeFinding(const Decision& out, const std::vector<AttachedReport>& reports,
                               const oci::Digest& manifest, const DecisionPolicy& policy) {
  std::map<std::string, std::string> ev = {{"image", manifest.str()}};
  std::string code = policy.codePrefix + "." + outcomeName(out.outcome), why;
  switch (out.outcome) {
    case Outcome::Pass:
    case Outcome::Missing:
      why = "no Kernodeck report is attached to " + manifest.str() + ": this image was not audited";
      break;
    case Outcome::Unverified:
      why = policy.keyGiven ? "none of the " + std::to_string(reports.size()) + " report(s) attached to " +
                                  manifest.str() +
                                  " passes its checks (about this image, signed by the required key, readable, not "
                                  "signed for a time ahead of this clock)"
                            : std::to_string(reports.size()) + " report(s) attached to " + manifest.str() +
                                  " listed, none verified: without a key nothing is checked and nothing passes (give "
                                  "--key)";
      break;
    case Outcome::TooMany:
      why = "more reports are attached to " + manifest.str() +
            " than are read (report.referrers.too_many): no report of it can pass";
      break;
    case Outcome::Expired:
      why = "every verified report of " + manifest.str() + " is older than the maximum age of " +
            age(*policy.maxAgeS * 1000) + ": audit the image again";
      break;
    case Outcome::Failed:
      ev["artifact"] = out.chosen->artifact.digest.str();
      why = "the newest verified report of " + manifest.str() + " (" + out.chosen->artifact.digest.str() +
            ", signed " + out.chosen->predicate->time + ") says " + out.chosen->verdict + ", not pass";
      if (out.newestPass)
        why = "a verified report of " + manifest.str() + " that says " + out.chosen->verdict + " (" +
              out.chosen->artifact.digest.str() + ", signed " + out.chosen->predicate->time +
              ") is as new as or newer than the newest pass (" + out.newestPass->artifact.digest.str() + ", signed " +
              out.newestPass->predicate->time + ")";
      break;
  }
  return {code, Severity::Error, why, ev};
}

}  // namespace

const AttachedReport* newestGood(const std::vector<AttachedReport>& reports) {
  const AttachedReport* best = nullptr;
  if (blocked(reports)) return nullptr;
  for (const auto& r : reports)
    if (counts(r) && newer(r, best)) best = &r;
  return best;
}

Decision decide(const std::vector<AttachedReport>& reports, const oci::Digest& manifest, const DecisionPolicy& policy) {
  Decision out;
  const AttachedReport* newestFail = nullptr;     // the newest counting report whose verdict is fail
  const AttachedReport* newestCounted = nullptr;  // any verdict
  bool anyGood = false;
  std::vector<report::Finding> aged, future;
  for (const auto& r : reports) {
    if (!counts(r)) continue;
    // Only a verified signature makes a report count (the listing without --key shows them all).
    if (r.signature != "verified") continue;
    int64_t old = policy.nowMs - r.predicate->timeMs;
    if (-old > policy.maxClockSkewS * 1000) {
      // Signed for a time ahead of this clock: as a pass it would outrank every report signed until
      // then, so it does not count as one. A fail so signed still blocks: the signer said fail, and
      // dropping it could only let an older pass through.
      bool fail = r.verdict == "fail";
      future.push_back({"report.time.future",
                        Severity::Error,
                        "report " + r.artifact.digest.str() + " (" + r.verdict + ") is signed for " + r.predicate->time +
                            ", " + age(-old) + " ahead of this clock (more than the allowed skew of " +
                            age(policy.maxClockSkewS * 1000) + ", --max-clock-skew); " +
                            (fail ? "as a fail it still blocks" : "it does not count"),
                        {{"artifact", r.artifact.digest.str()}, {"image", manifest.str()}}});
      if (!fail) continue;
      anyGood = true;
      if (newer(r, newestCounted)) newestCounted = &r;
      if (newer(r, newestFail)) newestFail = &r;
      continue;
    }
    anyGood = true;
    if (policy.maxAgeS && old > *policy.maxAgeS * 1000) {
      aged.push_back({"report.age.exceeded",
                      Severity::Info,
                      "report " + r.artifact.digest.str() + " (" + r.verdict + ", signed " + r.predicate->time + ", " +
                          age(old) + " ago) is older than the maximum age of " + age(*policy.maxAgeS * 1000) +
                          "; it does not count",
                      {{"artifact", r.artifact.digest.str()}, {"image", manifest.str()}}});
      continue;
    }
    if (newer(r, newestCounted)) newestCounted = &r;
    if (r.verdict == "pass" && newer(r, out.newestPass)) out.newestPass = &r;
    if (r.verdict == "fail" && newer(r, newestFail)) newestFail = &r;
  }
  // A fail as new as the newest pass or newer blocks it; an incomplete audit says nothing
  // either way, unless nothing else counts.
  if (blocked(reports)) {
    out.outcome = Outcome::TooMany;
    out.newestPass = nullptr;
  } else if (out.newestPass && (!newestFail || newer(*out.newestPass, newestFail))) {
    out.outcome = Outcome::Pass;
    out.chosen = out.newestPass;
  } else if (newestFail || newestCounted) {
    out.outcome = Outcome::Failed;
    out.chosen = newestFail ? newestFail : newestCounted;
  } else if (reports.empty()) {
    out.outcome = Outcome::Missing;
  } else {
    out.outcome = anyGood ? Outcome::Expired : Outcome::Unverified;
  }

  for (const auto& r : reports)
    for (auto p : r.problems) {
      if (out.met()) p.severity = Severity::Warning;
      out.findings.push_back(std::move(p));
    }
  for (auto& f : aged) out.findings.push_back(std::move(f));
  for (auto& f : future) {
    if (out.met()) f.severity = Severity::Warning;
    out.findings.push_back(std::move(f));
  }
  if (!out.met()) out.findings.push_back(outcomeFinding(out, reports, manifest, policy));
  return out;
}

}  // namespace kernodeck::attest
