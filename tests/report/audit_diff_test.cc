// diff of two audit reports: drift counted first, packages and findings grouped.
#include "kernodeck/report/audit_diff.h"

#include <gtest/gtest.h>

using namespace kernodeck::report;
using nlohmann::json;

namespace {

json audit(const std::string& python311, int modifiedNodeFiles, bool withSix) {
  Report r("audit");
  r.subject()["reference"] = "dir:/";
  for (int i = 0; i < modifiedNodeFiles; ++i)
    r.add("os.package.modified", Severity::Error, "file " + std::to_string(i) + " of nodejs differs",
          {{"package", "nodejs"},
           {"path", "/usr/share/nodejs/" + std::to_string(i) + ".js"},
           {"layer", std::to_string(i % 3)}});
  r.add("image.tag.mutable", Severity::Warning, "no tag");
  json pkgs = json::array({{{"name", "nodejs"}, {"version", "18.19.0"}, {"architecture", "amd64"}},
                           {{"name", "python3.11"}, {"version", python311}, {"architecture", "amd64"}}});
  r.section("os_packages") = {{"packages", pkgs}};
  json py = json::array({{{"name", "attrs"}, {"version", "23.1.0"}}});
  if (withSix) py.push_back({{"name", "six"}, {"version", "1.16.0"}});
  r.section("python") = {{"environments", json::array({{{"prefix", "/opt/venv"}, {"packages", py}}})}};
  return r.toJson();
}

}  // namespace

TEST(AuditDiff, SummaryFirstThenGroupedDetails) {
  json a = audit("3.11.2-6", 700, true), b = audit("3.11.2-6+deb12u1", 0, false);
  ASSERT_TRUE(isAuditReport(a));
  EXPECT_FALSE(isAuditReport(json{{"schema", "kernodeck.reference/v1"}}));
  Report d = diffAuditReports(a, b, "a.json", "b.json");
  json j = d.toJson(1);
  EXPECT_EQ(j["diff"]["packages_changed"], 1);
  EXPECT_EQ(j["diff"]["packages_removed"], 1);
  EXPECT_EQ(j["diff"]["packages_added"], 0);
  EXPECT_EQ(j["diff"]["findings_gone"], 700);
  EXPECT_EQ(j["diff"]["findings_new"], 0);  // the same finding in another layer is the same finding
  std::string t = d.toText(1);
  size_t summary = t.find("packages  0 added, 1 removed, 1 changed (4 in A, 3 in B)");
  ASSERT_NE(summary, std::string::npos) << t;
  EXPECT_NE(t.find("drift     0 findings new in B, 700 gone from A"), std::string::npos) << t;
  size_t changed = t.find("diff.package.changed: python3.11:amd64 (dpkg) is 3.11.2-6 in A and 3.11.2-6+deb12u1 in B");
  ASSERT_NE(changed, std::string::npos) << t;
  EXPECT_LT(summary, changed);
  EXPECT_NE(t.find("diff.finding.gone: 700 findings for package nodejs"), std::string::npos) << t;
  EXPECT_NE(t.find("700 findings for package nodejs\n\nEvery finding, with every path: --format json"),
            std::string::npos);  // info: one line
  EXPECT_LT(std::count(t.begin(), t.end(), '\n'), 30) << t;
  EXPECT_EQ(d.exitCode(1), kExitFindings);
  // Reversed, the findings are new, with their own severity.
  json r = diffAuditReports(b, a, "b.json", "a.json").toJson();
  EXPECT_EQ(r["diff"]["findings_new"], 700);
  EXPECT_EQ(r["groups"][0]["code"], "diff.finding.new");
  EXPECT_EQ(r["groups"][0]["severity"], "error");
  const json* firstNew = nullptr;
  for (const auto& f : r["findings"])
    if (f["code"] == "diff.finding.new" && !firstNew) firstNew = &f;
  ASSERT_TRUE(firstNew);
  EXPECT_EQ((*firstNew)["finding"], "os.package.modified");
  EXPECT_EQ((*firstNew)["package"], "nodejs");
  // The same report twice: no drift.
  Report same = diffAuditReports(a, a, "a", "a");
  EXPECT_TRUE(same.findings().empty());
  EXPECT_EQ(same.exitCode(0), kExitOk);
}
