// Whether an image may run, judged from the reports attached to it: the one rule that
// `kernodeck reports`, `probe --require-report` and any other gate apply, so they cannot
// disagree. Reports are ordered by the time signed into them (never by an annotation or a
// tag, which anyone who can push may rewrite); only reports without problems (readable, about
// this image, signed by the required key) and younger than the maximum age count. The image
// passes when the newest counting report says pass and no counting report that is not a pass
// is as new or newer: a registry writer may hide reports (a denial) but cannot make an older
// pass outrank a newer fail.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/attest/attached_report.h"

namespace kernodeck::attest {

// The default of --max-clock-skew: how far ahead of the reader's clock a signed time may be
// (clocks of the signing CI and the node differ by seconds under NTP; minutes without it).
inline constexpr int64_t kDefaultMaxClockSkewS = 300;

struct DecisionPolicy {
  int64_t nowMs = 0;                        // the time the decision is made
  std::optional<int64_t> maxAgeS;           // reports signed longer ago do not count
  std::string codePrefix = "probe.report";  // of the outcome's finding: PREFIX.missing, ...
  // A report signed for a time more than this ahead of nowMs does not count (report.time.future).
  int64_t maxClockSkewS = kDefaultMaxClockSkewS;
  // False when no key was given (kernodeck reports without --key): nothing is verified, nothing
  // counts, and the unverified outcome says so.
  bool keyGiven = true;
};

enum class Outcome {
  Pass,        // the newest counting report passes, no newer non-pass
  Missing,     // nothing attached
  Unverified,  // reports attached, none without problems
  Expired,     // reports without problems, all older than the maximum age
  Failed,      // a counting report that is not a pass is the newest, or as new as the newest pass
  TooMany,     // more referrers or envelopes listed than are read (report.referrers.too_many)
};
// "pass", "missing", "unverified", "expired", "failed", "too_many"
const char* outcomeName(Outcome o);

struct Decision {
  Outcome outcome = Outcome::Missing;
  bool met() const { return outcome == Outcome::Pass; }
  // The report that decided: the newest pass when met, the newest blocking non-pass when
  // failed; nullptr otherwise.
  const AttachedReport* chosen = nullptr;
  const AttachedReport* newestPass = nullptr;
  // Each report's problems (errors when not met, warnings when met: they were skipped), an info
  // finding report.age.exceeded for each report too old to count, report.time.future (an error,
  // a warning when met) for each signed for a time ahead of the clock, and, when not met, one
  // error PREFIX.<outcome> saying why.
  std::vector<report::Finding> findings;
};

// `reports` as readReports checked them (pointers in the result point into it).
Decision decide(const std::vector<AttachedReport>& reports, const oci::Digest& manifest, const DecisionPolicy& policy);

// The newest report without problems by signed time, whatever its age; nullptr when none or
// when the listing is past the bounds (an entry blocksAll).
const AttachedReport* newestGood(const std::vector<AttachedReport>& reports);

}  // namespace kernodeck::attest
