#include "kernodeck/report/report.h"

#include <gtest/gtest.h>

using namespace kernodeck;
using namespace kernodeck::report;

TEST(Report, FirstFailureLeavesLaterStepsNotReached) {
  Report r("audit");
  r.declareSteps({"a", "b", "c"});
  EXPECT_TRUE(r.runStep("a", [] { return Status(); }));
  EXPECT_FALSE(r.runStep("b", [] { return Status(Error::Io("disk on fire")); }));
  bool ran = false;
  EXPECT_FALSE(r.runStep("c", [&] {
    ran = true;
    return Status();
  }));
  EXPECT_FALSE(ran);
  auto j = r.toJson();
  EXPECT_EQ(j["schema"], "kernodeck.report/v1");
  EXPECT_EQ(j["steps"][0]["status"], "passed");
  EXPECT_EQ(j["steps"][1]["status"], "failed");
  EXPECT_EQ(j["steps"][1]["error"], "disk on fire");
  EXPECT_EQ(j["steps"][2]["status"], "not_reached");
  EXPECT_EQ(j["first_error"], "disk on fire");
  EXPECT_EQ(r.exitCode(2), kExitIncomplete);
}

TEST(Report, SkippedStepStaysSkipped) {
  Report r("audit");
  r.declareSteps({"os"});
  r.runStep("os", [&] {
    r.skipStep("os", "no os-release");
    return Status();
  });
  EXPECT_EQ(r.toJson()["steps"][0]["status"], "skipped");
  EXPECT_EQ(r.exitCode(2), kExitOk);
}

TEST(Report, ExitCodeFollowsFailOn) {
  Report r("audit");
  r.add("x.warn", Severity::Warning, "w");
  EXPECT_EQ(r.exitCode(2), kExitOk);
  EXPECT_EQ(r.exitCode(1), kExitFindings);
  EXPECT_EQ(r.exitCode(0), kExitFindings);
  EXPECT_EQ(r.exitCode(-1), kExitOk);
  EXPECT_FALSE(parseFailOn("fatal").ok());
  EXPECT_EQ(*parseFailOn("warning"), 1);
}

TEST(Report, FindingsAreRedactedAndCarryEvidence) {
  Report r("audit");
  r.add("secret.leak", Severity::Error, "found https://bob:hunter2@example.com/x", {{"path", "etc/pip.conf"}});
  auto j = r.toJson();
  EXPECT_EQ(j["findings"][0]["message"], "found https://***@example.com/x");
  EXPECT_EQ(j["findings"][0]["path"], "etc/pip.conf");
  EXPECT_EQ(j["summary"]["findings"]["error"], 1);
  EXPECT_EQ(r.toText().find("hunter2"), std::string::npos);
  EXPECT_NE(r.toText().find("secret.leak"), std::string::npos);
}
