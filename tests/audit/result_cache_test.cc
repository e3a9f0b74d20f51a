// The audit's result cache (result_cache.h): an entry reads back as it was stored, and an
// entry that is damaged, foreign or records a failed step is ignored rather than replayed.
#include "kernodeck/audit/result_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace audit_result_cache_test {

using namespace kernodeck;
using namespace kernodeck::audit;

namespace {

std::string tempDir() {
  char t[] = "/tmp/kdk-result-cache-XXXXXX";
  return ::mkdtemp(t);
}

StoredResult sample() {
  StoredResult s;
  for (const char* name : kResultSteps) {
    report::Step st;
    st.name = name;
    st.status = std::string(name) == "python" ? report::StepStatus::Skipped : report::StepStatus::Passed;
    st.error = st.status == report::StepStatus::Skipped ? "no Python in the image" : "";
    s.steps.push_back(st);
  }
  s.sections["os"] = {{"id", "debian"}};
  s.findings.push_back(
      {"layer.path.suspicious", report::Severity::Warning, "tar entry 'x': absolute path", {{"layer", "0"}}});
  s.expectation.accelerator = "cuda";
  s.expectation.torchVersion = "2.1.0+cu121";
  return s;
}

TEST(ResultCache, AnEntryReadsBackAsStored) {
  std::string dir = tempDir(), path = dir + "/results/sha256/x.json";
  storeResult(path, sample());
  auto back = loadResult(path);
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->steps.size(), std::size(kResultSteps));
  EXPECT_EQ(back->steps[3].name, "python");
  EXPECT_EQ(back->steps[3].status, report::StepStatus::Skipped);
  EXPECT_EQ(back->steps[3].error, "no Python in the image");
  EXPECT_EQ(back->steps[0].status, report::StepStatus::Passed);
  EXPECT_EQ(back->sections["os"]["id"], "debian");
  ASSERT_EQ(back->findings.size(), 1u);
  EXPECT_EQ(back->findings[0].code, "layer.path.suspicious");
  EXPECT_EQ(back->findings[0].severity, report::Severity::Warning);
  EXPECT_EQ(back->findings[0].evidence.at("layer"), "0");
  EXPECT_EQ(back->expectation.torchVersion, "2.1.0+cu121");
  std::filesystem::remove_all(dir);
}

TEST(ResultCache, DamagedOrFailedEntriesAreIgnored) {
  const struct {
    const char* name;
    std::string text;
  } cases[] = {
      {"missing", ""},
      {"torn", R"({"steps": {"layers": )"},
      {"not an object", "[1, 2]"},
      {"no findings", R"({"steps": {}, "sections": {}})"},
      {"a step missing", R"({"steps": {"layers": {"status": "passed"}}, "sections": {}, "findings": []})"},
      {"a failed step",
       R"({"steps": {"layers": {"status": "failed"}, "os": {"status": "passed"}, "os-packages": {"status": "passed"},
           "python": {"status": "passed"}}, "sections": {}, "findings": []})"},
      {"a status of the wrong type",
       R"({"steps": {"layers": {"status": 1}, "os": {"status": "passed"}, "os-packages": {"status": "passed"},
           "python": {"status": "passed"}}, "sections": {}, "findings": []})"},
      {"an unknown severity", R"({"steps": {}, "sections": {}, "findings": [{"code": "x", "severity": "fatal"}]})"},
  };
  std::string dir = tempDir();
  for (const auto& c : cases) {
    std::string path = dir + "/entry.json";
    std::filesystem::remove(path);
    if (std::string(c.name) != "missing") std::ofstream(path) << c.text;
    EXPECT_FALSE(loadResult(path).has_value()) << c.name;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace

}  // namespace audit_result_cache_test
