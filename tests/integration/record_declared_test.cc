// The record says exactly what was declared and what happened, through the real binary:
// criteria checked as written; usage errors exit 2; a reference knows when it was declared and
// when a check first used it, and new criteria after a check need --revise, which keeps the
// earlier ones; dossier build prints the verdict its page shows, and the page says when and
// where each report was made and the hash of its file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <map>

#include "kernodeck/record/tensor_file.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/process.h"
#include "support.h"

namespace integration_record_declared_test {

using nlohmann::json;
using namespace kdktest;
using namespace kernodeck;

namespace {

const std::string K = KERNODECK_BIN;



// A folder with expected/ and out/ (one emb.npy each) and a host root for reference init.
struct Project {
  std::string base;
  std::vector<std::string> init(const std::vector<std::string>& criteria, const std::string& ref = "reference.json") {
    std::vector<std::string> a = {"reference",   "init",         "--expected", "expected",
                                  "--host-root", base + "/host", "-o",         ref};
    for (size_t i = 0; i < criteria.size(); ++i) {
      a.push_back("--criterion");
      a.push_back(criteria[i]);
      a.push_back("--why");
      a.push_back("reason " + std::to_string(i));
    }
    return a;
  }
};

Project makeProject(const std::string& tag, const record::Tensor& expected, const record::Tensor& actual) {
  Project p{tempDir(tag)};
  run("mkdir -p " + p.base + "/expected " + p.base + "/out " + p.base + "/host/proc " + p.base + "/host/etc");
  writeFile(p.base + "/expected/emb.npy", record::writeNpy(expected));
  writeFile(p.base + "/out/emb.npy", record::writeNpy(actual));
  return p;
}

// A row whose cosine with (1, 0) is c.
record::Tensor atCosine(double c) { return {"", "float64", {1, 2}, {c, std::sqrt(1 - c * c)}}; }

void expectUsageError(const RunResult& r, const std::string& what, const std::string& named) {
  EXPECT_EQ(r.code, 2) << what << ": " << r.err << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
  EXPECT_NE(r.err.find(named), std::string::npos) << what << ": " << r.err;
}


}  // namespace

TEST(RecordDeclared, CriteriaAreCheckedAsWritten) {
  Project p = makeProject("asw", {"", "float64", {1, 2}, {1, 0}}, atCosine(0.9992));
  ASSERT_EQ(kdk(p.init({"cosine>=0.9994"}), p.base).code, 0);
  json ref = json::parse(readFile(p.base + "/reference.json"));
  EXPECT_EQ(ref["result"]["criteria"][0]["text"], "cosine>=0.9994");
  EXPECT_EQ(ref["result"]["criteria"][0]["threshold"], 0.9994);
  RunResult check = kdk({"sample", "check", "out", "--reference", "reference.json"}, p.base);
  EXPECT_EQ(check.code, 1) << check.out;
  EXPECT_NE(check.out.find("fails cosine>=0.9994: min cosine 0.9992 < 0.9994"), std::string::npos) << check.out;
  RunResult shown = kdk({"reference", "show", "--reference", "reference.json"}, p.base);
  EXPECT_NE(shown.out.find("criterion     cosine>=0.9994  because: reason 0"), std::string::npos) << shown.out;

  // An absolute error just beyond a threshold written with many digits.
  Project a = makeProject("asw-abs", {"", "float64", {1, 1}, {0}}, {"", "float64", {1, 1}, {1.2368e-6}});
  ASSERT_EQ(kdk(a.init({"abs<=1.2351e-6"}), a.base).code, 0);
  RunResult abs = kdk({"sample", "check", "out", "--reference", "reference.json"}, a.base);
  EXPECT_EQ(abs.code, 1) << abs.out;
  EXPECT_NE(abs.out.find("abs<=1.2351e-6: max abs error 1.2368e-06 > 1.2351e-6"), std::string::npos) << abs.out;

  // Bit-identical outputs meet every cosine up to 1.
  record::Tensor many{"", "float32", {2, 4}, {0.1, 0.7, 1e-3, 3.3, -2.9, 1e-7, 0.333333, 7.77}};
  Project same = makeProject("asw-same", many, many);
  ASSERT_EQ(kdk(same.init({"cosine>=0.9999", "cosine>=0.99995", "cosine>=0.99999", "cosine>=1"}), same.base).code, 0);
  RunResult ok = kdk({"sample", "check", "out", "--reference", "reference.json", "--json"}, same.base);
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_EQ(countFindings(json::parse(ok.out), "sample.criterion.met"), 4) << ok.out;
}

TEST(RecordDeclared, ReferenceInitUsageErrorsExit2) {
  Project p = makeProject("usage", {"", "float64", {1, 1}, {0}}, {"", "float64", {1, 1}, {0}});
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"reference", "init", "--host-root", p.base + "/host", "-o", "r.json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return kdk(a, p.base);
  };
  expectUsageError(with({"--expected", "expected"}), "no criterion", "--criterion is required");
  expectUsageError(with({"--expected", "expected", "--criterion", "abs<=1e-6"}), "no why", "--why");
  expectUsageError(with({"--expected", "expected", "--criterion", "abs<=1e-6", "--why", " "}), "empty why", "is empty");
  for (const char* bad : {"best", "cosine>=1.5", "abs<=-1e-6", "knn:0>=0.9", "bogus<=1", "abs<=1.2.3"})
    expectUsageError(with({"--expected", "expected", "--criterion", bad, "--why", "x"}), bad, "criterion");
  // A criterion without expected outputs is no longer dropped silently.
  expectUsageError(with({"--criterion", "bogus<=1", "--why", "x"}), "bogus without --expected", "bogus");
  expectUsageError(with({"--criterion", "abs<=1e-6", "--why", "x"}), "criterion without --expected", "--expected");
  expectUsageError(with({"--revise", "looser"}), "--revise with nothing to revise", "no reference");
  EXPECT_FALSE(exists(p.base + "/r.json"));
}

TEST(RecordDeclared, NewCriteriaAfterACheckNeedRevise) {
  Project p = makeProject("revise", {"", "float64", {1, 1}, {0}}, {"", "float64", {1, 1}, {2e-6}});
  ASSERT_EQ(kdk(p.init({"abs<=1e-6"}), p.base).code, 0);
  json declared = json::parse(readFile(p.base + "/reference.json"));
  EXPECT_TRUE(declared["first_checked"].is_null());
  EXPECT_EQ(declared["declared_before_comparison"], true);
  // Before any check, declaring again is no revision.
  ASSERT_EQ(kdk(p.init({"abs<=1e-6"}), p.base).code, 0);
  RunResult check = kdk({"sample", "check", "out", "--reference", "reference.json"}, p.base);
  ASSERT_EQ(check.code, 1) << check.out;
  json checked = json::parse(readFile(p.base + "/reference.json"));
  ASSERT_TRUE(checked["first_checked"].is_string());
  std::string firstChecked = checked["first_checked"];
  // A second check keeps the first one's time.
  kdk({"sample", "check", "out", "--reference", "reference.json"}, p.base);
  EXPECT_EQ(json::parse(readFile(p.base + "/reference.json"))["first_checked"], firstChecked);
  std::string before = readFile(p.base + "/reference.json");
  writeFile(p.base + "/checked.json", before);

  // Looser criteria after the failing check: refused, the file untouched.
  RunResult looser = kdk(p.init({"abs<=1e-5"}), p.base);
  expectUsageError(looser, "re-declaring after a check", "--revise");
  EXPECT_EQ(readFile(p.base + "/reference.json"), before);

  // With --revise: the earlier criteria, their times and the reason are kept.
  std::vector<std::string> revise = p.init({"abs<=1e-5"});
  revise.insert(revise.end(), {"--revise", "the GPU run differs by 2e-6; float32 reductions reorder"});
  RunResult revised = kdk(revise, p.base);
  ASSERT_EQ(revised.code, 0) << revised.err;
  json now = json::parse(readFile(p.base + "/reference.json"));
  EXPECT_EQ(now["declared_before_comparison"], false);
  EXPECT_TRUE(now["first_checked"].is_null());
  ASSERT_EQ(now["revisions"].size(), 1u);
  EXPECT_EQ(now["revisions"][0]["criteria"][0]["text"], "abs<=1e-6");
  EXPECT_EQ(now["revisions"][0]["first_checked"], firstChecked);
  EXPECT_EQ(now["revisions"][0]["why"], "the GPU run differs by 2e-6; float32 reductions reorder");
  RunResult show = kdk({"reference", "show", "--reference", "reference.json"}, p.base);
  EXPECT_NE(show.out.find("before check  no: the criteria were revised after a check"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("because: the GPU run differs by 2e-6"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("was: abs<=1e-6"), std::string::npos) << show.out;
  // A hand edit claiming the criteria came first is refused.
  json claim = now;
  claim["declared_before_comparison"] = true;
  writeFile(p.base + "/claim.json", claim.dump());
  expectUsageError(kdk({"reference", "show", "--reference", "claim.json"}, p.base), "a false claim",
                   "declared_before_comparison");
  // diff names the revision.
  RunResult diff = kdk({"diff", "--json", "checked.json", "reference.json"}, p.base);
  json dj = json::parse(diff.out);
  EXPECT_EQ(countFindings(dj, "diff.reference.revised"), 1) << diff.out;
  EXPECT_NE(diff.out.find("B revised its criteria on"), std::string::npos) << diff.out;
  // The dossier page shows it too, and a check of the dossier's own reference leaves it sealed.
  RunResult c2 = kdk({"sample", "check", "out", "--reference", "reference.json", "--json", "-o", "check.json"}, p.base);
  ASSERT_EQ(c2.code, 0) << c2.err;
  RunResult build = kdk({"dossier", "build", "d", "--reference", "reference.json", "--report", "check.json"}, p.base);
  ASSERT_EQ(build.code, 0) << build.out << build.err;
  std::string page = readFile(p.base + "/d/index.html");
  EXPECT_NE(page.find("<table id=\"revisions\">"), std::string::npos);
  EXPECT_NE(page.find("the GPU run differs by 2e-6"), std::string::npos);
  EXPECT_NE(page.find("no: the criteria were revised after a check"), std::string::npos);
  std::string sealed = readFile(p.base + "/d/reference.json");
  kdk({"sample", "check", "out", "--reference", "d/reference.json"}, p.base);
  EXPECT_EQ(readFile(p.base + "/d/reference.json"), sealed);
  EXPECT_EQ(kdk({"dossier", "verify", "d"}, p.base).code, 0);
}

TEST(RecordDeclared, DossierBuildPrintsThePagesVerdict) {
  Project p = makeProject("verdict", {"", "float64", {1, 1}, {0}}, {"", "float64", {1, 1}, {2e-6}});
  ASSERT_EQ(kdk(p.init({"abs<=1e-6"}), p.base).code, 0);
  ASSERT_EQ(kdk({"sample", "check", "out", "--reference", "reference.json", "--json", "-o", "fail.json"}, p.base).code,
            1);
  run("cp -r " + p.base + "/expected " + p.base + "/same");
  ASSERT_EQ(kdk({"sample", "check", "same", "--reference", "reference.json", "--json", "-o", "pass.json"}, p.base).code,
            0);
  struct Case {
    std::vector<std::string> reports;
    int code;
    const char *printed, *page;
  } cases[] = {
      {{"pass.json"}, 0, "verdict   PASS", "Verdict: passed</strong>"},
      {{"pass.json", "fail.json"}, 1, "verdict   FAIL", "Verdict: failed</strong>"},
      {{},
       3,
       "verdict   INCOMPLETE: the dossier's verdict is incomplete: no check report is included",
       "Verdict: incomplete</strong>"},
  };
  int n = 0;
  for (const auto& c : cases) {
    std::string dir = "d" + std::to_string(n++);
    std::vector<std::string> args = {"dossier", "build", dir, "--reference", "reference.json"};
    for (const auto& r : c.reports) args.insert(args.end(), {"--report", r});
    RunResult b = kdk(args, p.base);
    SCOPED_TRACE(dir);
    EXPECT_EQ(b.code, c.code) << b.out << b.err;
    EXPECT_NE(b.out.find(c.printed), std::string::npos) << b.out;
    std::string page = readFile(p.base + "/" + dir + "/index.html");
    EXPECT_NE(page.find(c.page), std::string::npos);
    EXPECT_TRUE(exists(p.base + "/" + dir + "/MANIFEST.sha256"));  // written whatever the verdict
    if (c.reports.empty()) continue;
    // Each report: when and where it was made, and the sha256 of its file as carried.
    size_t row = page.find("<tr class=\"report\">");
    ASSERT_NE(row, std::string::npos) << page;
    std::string reportRow = page.substr(row, page.find("</tr>", row) - row);
    EXPECT_EQ(reportRow.find("not recorded"), std::string::npos) << reportRow;
    std::string file = p.base + "/" + dir + "/reports/1-sample-check.json";
    std::string sha = util::sha256Hex(readFile(file));
    EXPECT_NE(page.find("file sha256 <code class=\"file-sha256\">" + sha + "</code>"), std::string::npos) << page;
    json carried = json::parse(readFile(file));
    EXPECT_TRUE(carried["created"].is_string());
    EXPECT_NE(page.find(carried["created"].get<std::string>()), std::string::npos);
    EXPECT_NE(page.find(carried["hostname"].get<std::string>()), std::string::npos);
  }
}

TEST(RecordDeclared, ResumeInspectOfAFileThatIsNoCheckpointExits2) {
  std::string base = tempDir("inspect");
  writeFile(base + "/notes.txt", "this is not a checkpoint\n");
  RunResult r = kdk({"resume", "inspect", "notes.txt", "--json"}, base);
  json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out << r.err;
  if (j["first_error"].is_string() && j["first_error"].get<std::string>().find("needs LibTorch") != std::string::npos)
    GTEST_SKIP() << "built without LibTorch";
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is not a checkpoint"), std::string::npos) << r.err;
  // A file that is not there is still exit 3: it could not be read.
  EXPECT_EQ(kdk({"resume", "inspect", "missing.pt"}, base).code, 3);
}

}  // namespace integration_record_declared_test
