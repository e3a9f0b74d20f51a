// Findings grouped for people: one code, one severity and one package (or, for findings about
// no package, one layer) make one group with a count, so a package with 792 modified files is
// one line to act on rather than 792. Grouping is a view: the report keeps every finding.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernodeck/report/report.h"

namespace kernodeck::report {

struct FindingGroup {
  std::string code;
  Severity severity = Severity::Warning;
  std::string package;                  // shared by every member; empty when the findings name no package
  std::string layer;                    // shared by every member when they name no package; else empty
  std::vector<const Finding*> members;  // in report order; point into the grouped vector
  // The exception entry shared by every member when they are suppressed (suppressed findings
  // are grouped apart from live ones, and per entry); nullopt for live findings.
  std::optional<Suppression> suppression;

  size_t count() const { return members.size(); }
  // Every member's `path` evidence, in order (members without one are left out).
  std::vector<std::string> paths() const;
  // "os.package.modified: 792 findings for package nodejs", or the single member's message.
  std::string headline() const;
};

// Groups in order of severity (errors first), then of each group's first finding. A group is
// either all live or all suppressed by one exceptions entry.
std::vector<FindingGroup> groupFindings(const std::vector<Finding>& findings);

}  // namespace kernodeck::report
