// `kernodeck diff A.json B.json` of two audit reports (kernodeck.report/v1, command "audit"):
// what drifted between two images or two machines. Packages (dpkg, and Python per environment)
// added, removed or changed, and findings new in B or gone from A, each a finding of the diff
// report so the text groups them like an audit's (one line per package, large groups cut), with
// the counts in a "diff" section that the text's summary block shows first.
#pragma once

#include <nlohmann/json.hpp>

#include "kernodeck/report/report.h"

namespace kernodeck::report {

// True for a kernodeck.report/v1 document written by `kernodeck audit`.
bool isAuditReport(const nlohmann::json& j);

// Codes: diff.package.added / .removed / .changed (warning; evidence package, environment,
// version_a, version_b), diff.finding.new (the finding's own severity and evidence, code in
// `finding`), diff.finding.gone (info).
Report diffAuditReports(const nlohmann::json& a, const nlohmann::json& b, const std::string& nameA,
                        const std::string& nameB);

}  // namespace kernodeck::report
