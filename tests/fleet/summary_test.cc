// `fleet summary`'s GPU matrix: images x GPU generations, read from each report's gpu_support
// section (audit/gpu_support.h), in JSON and text.
#include "kernodeck/fleet/summary.h"

#include <gtest/gtest.h>

#include "kernodeck/gpu/gpu_code_judge.h"

namespace fleet_summary_test {

using nlohmann::json;
using namespace kernodeck;

namespace {

// An audit report's gpu_support section as audit writes it, for an image whose one library has
// `sass` and `ptx`.
json reportWith(std::vector<std::string> sass, std::vector<std::string> ptx) {
  std::vector<gpu::GpuCode> code = {{"/t/libtorch_cuda.so", "", std::move(sass), std::move(ptx), false}};
  return {{"schema", "kernodeck.report/v1"},
          {"gpu_support", {{"libraries", 1}, {"generations", gpu::generationSupport(code)}}}};
}

}  // namespace

TEST(FleetSummary, GpuGenerationsOfAReport) {
  json old = fleet::gpuGenerationsOf(reportWith({"sm_70", "sm_75", "sm_80", "sm_86", "sm_90"}, {}));
  EXPECT_EQ(old, json({{"Volta", "sass"}, {"Turing", "sass"}, {"Ampere", "sass"}, {"Ada", "sass"}, {"Hopper", "sass"},
                       {"Blackwell", "none"}}));
  json ptx = fleet::gpuGenerationsOf(reportWith({"sm_80", "sm_90"}, {"compute_90"}));
  EXPECT_EQ(ptx["Blackwell"], "ptx");
  EXPECT_EQ(ptx["Hopper"], "sass");
  EXPECT_EQ(ptx["Turing"], "none");
  EXPECT_TRUE(fleet::gpuGenerationsOf(json{{"schema", "kernodeck.report/v1"}}).is_null());
  EXPECT_TRUE(fleet::gpuGenerationsOf(json::array()).is_null());
  // A damaged section: unknown words and wrong types read as unknown, never thrown.
  json odd = fleet::gpuGenerationsOf(json{{"gpu_support",
                                           {{"generations",
                                             {{{"generation", "Hopper"}, {"fit", "<script>"}},
                                              {{"generation", 3}},
                                              "x",
                                              {{"generation", "Ada"}, {"fit", "sass"}}}}}}});
  EXPECT_EQ(odd["Hopper"], "unknown");
  EXPECT_EQ(odd["Ada"], "sass");
  EXPECT_EQ(odd.size(), 6u);
}

TEST(FleetSummary, TextShowsTheMatrixOfSeveralImages) {
  json images = json::array();
  auto row = [](const std::string& image, const json& report) {
    json r = {{"image", image}, {"verdict", "pass"}};
    if (json g = fleet::gpuGenerationsOf(report); !g.is_null()) r["gpu_generations"] = g;
    return r;
  };
  images.push_back(row("reg/team/old:cu118", reportWith({"sm_70", "sm_75", "sm_80", "sm_86", "sm_90"}, {})));
  images.push_back(row("reg/team/jit:cu121", reportWith({"sm_80", "sm_90"}, {"compute_90"})));
  images.push_back(row("reg/team/new:cu128", reportWith({"sm_80", "sm_90", "sm_100", "sm_120"}, {"compute_120"})));
  images.push_back(row("reg/team/cpu:latest", json{{"schema", "kernodeck.report/v1"}}));
  json s = {{"schema", "kernodeck.fleet-summary/v1"},
            {"images", images},
            {"verdicts", {{"pass", 4}}},
            {"findings_by_code", json::array()},
            {"failing_layers", json::array()},
            {"gpu_generations", {"Volta", "Turing", "Ampere", "Ada", "Hopper", "Blackwell"}}};
  std::string text = fleet::summaryText(s);
  EXPECT_NE(text.find("GPU generations (sass: runs;"), std::string::npos) << text;
  EXPECT_NE(text.find("  image                Volta     Turing    Ampere    Ada       Hopper    Blackwell\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  reg/team/old:cu118   sass      sass      sass      sass      sass      none\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  reg/team/jit:cu121   none      none      sass      sass      sass      ptx\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  reg/team/new:cu128   none      none      sass      sass      sass      sass\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  reg/team/cpu:latest  -         -         -         -         -         -\n"), std::string::npos)
      << text;
  s.erase("gpu_generations");
  EXPECT_EQ(fleet::summaryText(s).find("GPU generations"), std::string::npos);
}

}  // namespace fleet_summary_test
