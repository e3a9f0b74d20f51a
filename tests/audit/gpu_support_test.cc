// `audit --gpu` and the report's gpu_support section, judged from an Expectation's gpu_code (the
// layer scan fills it; here it is written by hand): issue 50's torch with sm_80;sm_90 SASS fails
// on a B200 naming libtorch_cuda.so, passes with a warning once it carries compute_90 PTX, and
// passes on an H100.
#include "kernodeck/audit/gpu_support.h"

#include <gtest/gtest.h>

namespace audit_gpu_support_test {

using namespace kernodeck;

namespace {

constexpr const char* kTorch = "/usr/local/lib/python3.11/dist-packages/torch/lib/libtorch_cuda.so";
constexpr const char* kC10 = "/usr/local/lib/python3.11/dist-packages/torch/lib/libc10_cuda.so";

gpu::Expectation torchWith(std::vector<std::string> ptx) {
  gpu::Expectation e;
  e.gpuCode.push_back({kTorch, "sha256:" + std::string(64, 'b'), {"sm_80", "sm_90"}, std::move(ptx), false});
  e.gpuCode.push_back({kC10, "sha256:" + std::string(64, 'b'), {"sm_80", "sm_90", "sm_100"}, {}, false});
  return e;
}

std::vector<gpu::GpuTarget> targets(std::initializer_list<const char*> names) {
  std::vector<gpu::GpuTarget> out;
  for (const char* n : names) out.push_back(*gpu::parseGpuTarget(n));
  return out;
}

}  // namespace

TEST(AuditGpuSupport, ALibraryWithoutCodeForTheGpuIsAnErrorNamingIt) {
  struct Case {
    const char* gpu;
    std::vector<std::string> ptx;
    const char* code;  // the one finding expected, nullptr for none
    int exit;          // under the default --fail-on error
  } cases[] = {
      {"B200", {}, "gpu.arch.unsupported", 1},
      {"B200", {"compute_90"}, "gpu.arch.ptx_only", 0},
      {"H100", {}, nullptr, 0},
      {"H100", {"compute_90"}, nullptr, 0},
      {"sm_100", {}, "gpu.arch.unsupported", 1},
      {"10.0", {"compute_90"}, "gpu.arch.ptx_only", 0},
      {"RTX PRO 6000 Blackwell", {"compute_90"}, nullptr, 0},  // 12.0: libc10_cuda.so cannot either
  };
  for (const auto& c : cases) {
    report::Report r("audit");
    audit::judgeGpuSupport(r, torchWith(c.ptx), targets({c.gpu}));
    std::string where = std::string(c.gpu) + (c.ptx.empty() ? " SASS only" : " with PTX");
    if (std::string(c.gpu) == "RTX PRO 6000 Blackwell") {
      // Neither library has 12.x SASS; torch's PTX covers it, c10's lack of PTX does not.
      ASSERT_EQ(r.findings().size(), 2u) << where;
      EXPECT_EQ(r.findings()[0].code, "gpu.arch.ptx_only");
      EXPECT_EQ(r.findings()[1].code, "gpu.arch.unsupported");
      EXPECT_EQ(r.findings()[1].evidence.at("library"), kC10);
      EXPECT_EQ(r.exitCode(2), 1);
      continue;
    }
    if (!c.code) {
      EXPECT_TRUE(r.findings().empty()) << where << ": " << r.findings()[0].message;
    } else {
      ASSERT_EQ(r.findings().size(), 1u) << where;
      const auto& f = r.findings()[0];
      EXPECT_EQ(f.code, c.code) << where;
      EXPECT_EQ(f.evidence.at("library"), kTorch) << where;
      EXPECT_EQ(f.evidence.at("capability"), "10.0") << where;
      EXPECT_EQ(f.evidence.at("sass"), "sm_80,sm_90") << where;
      EXPECT_NE(f.message.find("libtorch_cuda.so"), std::string::npos) << f.message;
      if (std::string(c.code) == "gpu.arch.unsupported") {
        EXPECT_NE(f.message.find("needs SASS sm_100 or sm_100a, or PTX compute_100 or older"), std::string::npos)
            << f.message;
      }
    }
    EXPECT_EQ(r.exitCode(2), c.exit) << where;
    ASSERT_TRUE(r.sections().contains("gpu_support")) << where;
    EXPECT_EQ(r.sections()["gpu_support"]["targets"][0]["capability"],
              std::string(c.gpu) == "H100" ? "9.0" : "10.0")
        << where;
  }
}

TEST(AuditGpuSupport, TheReportSaysWhichGenerationsItRunsOn) {
  report::Report r("audit");
  audit::judgeGpuSupport(r, torchWith({}), {});
  EXPECT_TRUE(r.findings().empty());
  const auto& s = r.sections()["gpu_support"];
  EXPECT_EQ(s["libraries"], 2);
  EXPECT_FALSE(s.contains("targets"));
  std::map<std::string, std::string> fit;
  for (const auto& g : s["generations"]) fit[g["generation"]] = g["fit"];
  EXPECT_EQ(fit, (std::map<std::string, std::string>{{"Volta", "none"}, {"Turing", "none"}, {"Ampere", "sass"},
                                                       {"Ada", "sass"}, {"Hopper", "sass"}, {"Blackwell", "none"}}));
  std::string text = r.toText();
  EXPECT_NE(text.find("gpu code  2 libraries: runs on Ampere, Ada, Hopper; cannot run on Volta, Turing, Blackwell"),
            std::string::npos)
      << text;
}

TEST(AuditGpuSupport, NoGpuCodeReadSaysSoPerTargetAndAddsNoSection) {
  report::Report r("audit");
  audit::judgeGpuSupport(r, gpu::Expectation{}, targets({"B200", "9.0"}));
  ASSERT_EQ(r.findings().size(), 2u);
  for (const auto& f : r.findings()) {
    EXPECT_EQ(f.code, "gpu.arch.unknown");
    EXPECT_EQ(f.severity, report::Severity::Info);
  }
  EXPECT_FALSE(r.sections().contains("gpu_support"));
  report::Report none("audit");
  audit::judgeGpuSupport(none, gpu::Expectation{}, {});
  EXPECT_TRUE(none.findings().empty());
  EXPECT_FALSE(none.sections().contains("gpu_support"));
}

}  // namespace audit_gpu_support_test
