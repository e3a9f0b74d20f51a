// KERNODECK_PROFILE=stages (docs/performance.md): `kernodeck audit` prints the CPU time of each
// stage on stderr, and the report it writes is the same as without the profile.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "support.h"

namespace integration_stage_profile_test {

using nlohmann::json;
using namespace kdktest;

namespace {

// The report without what differs between two runs by design: the steps' durations and the
// time the report was made.
json stable(json r) {
  for (auto& s : r["steps"]) s.erase("duration_ms");
  r.erase("created");
  return r;
}

}  // namespace

TEST(StageProfile, AuditPrintsEachStageAndTheSameReport) {
  std::string base = tempDir("stageprof");
  json entries = json::array({{{"path", "etc/os-release"}, {"content", "ID=kdk\n"}}});
  for (int i = 0; i < 50; ++i)
    entries.push_back({{"path", "opt/app/f" + std::to_string(i)}, {"content", std::string(4000 + i, 'a' + i % 26)}});
  // 16 MB in one file: enough CPU in the digests and the inflate to be seen at a millisecond.
  entries.push_back({{"path", "opt/app/weights.bin"}, {"content", std::string(16u << 20, 'w')}});
  json spec = {{"tag", "1.0"}, {"layers", json::array({{{"compression", "gzip"}, {"entries", entries}}})}};
  ASSERT_FALSE(mkimage(spec, base + "/img").empty());
  std::string cmd = std::string(KERNODECK_BIN) + " audit --no-cache --json oci:" + base + "/img:1.0";

  RunResult plain = run(cmd);
  RunResult profiled = run("KERNODECK_PROFILE=stages " + cmd);
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(profiled.code, 0) << profiled.err;
  EXPECT_EQ(plain.err.find("CPU time per stage"), std::string::npos) << plain.err;
  ASSERT_NE(profiled.err.find("CPU time per stage"), std::string::npos) << profiled.err;
  EXPECT_EQ(stable(json::parse(plain.out)), stable(json::parse(profiled.out)));

  // Every stage has a row with seconds and a share; the layer was inflated and its tar read.
  std::map<std::string, double> seconds;
  std::regex row(R"(^(.+?)\s+([0-9]+\.[0-9]{3})\s+([0-9]+\.[0-9])%$)");
  std::istringstream lines(profiled.err);
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_match(l, m, row)) seconds[m[1]] = std::stod(m[2]);
  }
  for (const char* stage : {"inflate", "compressed digest", "DiffID", "per-file digests", "tar parsing",
                            "view building", "package analysis", "result caches", "report", "other", "total (process)"})
    EXPECT_TRUE(seconds.count(stage)) << stage << " missing in:\n" << profiled.err;
  EXPECT_GT(seconds["total (process)"], 0.0) << profiled.err;
  // SHA-256 and MD5 of 16 MB, SHA-256 of the 16 MB tar stream: each takes milliseconds of CPU.
  EXPECT_GE(seconds["per-file digests"], 0.005) << profiled.err;
  EXPECT_GE(seconds["DiffID"], 0.002) << profiled.err;
  EXPECT_GE(seconds["inflate"], 0.001) << profiled.err;
  double sum = 0;
  for (const auto& [name, s] : seconds)
    if (name != "total (process)") sum += s;
  EXPECT_NEAR(sum, seconds["total (process)"], 0.01) << profiled.err;
}

}  // namespace integration_stage_profile_test
