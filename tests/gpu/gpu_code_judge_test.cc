#include "kernodeck/gpu/gpu_code_judge.h"

#include <gtest/gtest.h>

#include <map>

#include "kernodeck/gpu/gpu_models.h"

namespace gpu_gpu_code_judge_test {

using namespace kernodeck::gpu;

TEST(GpuCodeJudge, EntryFitsFollowsSassPtxAndVariantRules) {
  struct Case {
    const char* entry;
    const char* cap;
    CodeFit want;
  } cases[] = {
      {"sm_80", "8.0", CodeFit::Sass},     {"sm_80", "8.6", CodeFit::Sass},   {"sm_80", "8.9", CodeFit::Sass},
      {"sm_86", "8.0", CodeFit::None},     {"sm_80", "9.0", CodeFit::None},   {"sm_90", "10.0", CodeFit::None},
      {"sm_100", "10.3", CodeFit::Sass},   {"sm_100", "12.0", CodeFit::None}, {"sm_120", "12.1", CodeFit::Sass},
      {"sm_90a", "9.0", CodeFit::Sass},    {"sm_90a", "9.1", CodeFit::None},  {"sm_100a", "10.3", CodeFit::None},
      {"sm_100f", "10.3", CodeFit::Sass},  {"sm_103f", "10.0", CodeFit::None}, {"sm_120f", "12.1", CodeFit::Sass},
      {"compute_90", "9.0", CodeFit::Ptx}, {"compute_90", "12.0", CodeFit::Ptx}, {"compute_90", "8.9", CodeFit::None},
      {"compute_90a", "9.0", CodeFit::Ptx}, {"compute_90a", "10.0", CodeFit::None},
      {"compute_100f", "10.3", CodeFit::Ptx}, {"compute_100f", "12.0", CodeFit::None},
      {"compute_75", "7.5", CodeFit::Ptx}, {"sm_70", "7.5", CodeFit::Sass},  {"sm_75", "7.0", CodeFit::None},
      {"sm_", "9.0", CodeFit::Unknown},    {"sm_9", "9.0", CodeFit::Unknown}, {"sm_090", "9.0", CodeFit::Unknown},
      {"gfx942", "9.0", CodeFit::Unknown}, {"sm_90", "", CodeFit::Unknown},  {"sm_90", "nine", CodeFit::Unknown},
      {"sm_1000", "9.0", CodeFit::Unknown},
  };
  for (const auto& c : cases) EXPECT_EQ(entryFits(c.entry, c.cap), c.want) << c.entry << " on " << c.cap;
}

GpuCode lib(const char* path, std::vector<std::string> sass, std::vector<std::string> ptx) {
  return GpuCode{path, "sha256:aa", std::move(sass), std::move(ptx), false};
}

TEST(GpuCodeJudge, JudgesEveryLibraryOnItsOwn) {
  std::vector<GpuCode> code = {
      lib("/torch/lib/libtorch_cuda.so", {"sm_80", "sm_90"}, {}),
      lib("/torch/lib/libc10_cuda.so", {"sm_80", "sm_90"}, {"compute_90"}),
      lib("/site-packages/flash_attn_2_cuda.so", {"sm_80"}, {}),
      lib("/usr/lib/libodd.so", {"gfx90a"}, {}),
  };
  struct Case {
    const char* cap;
    std::vector<CodeFit> want;
    CodeFit worst;
  } cases[] = {
      {"8.0", {CodeFit::Sass, CodeFit::Sass, CodeFit::Sass, CodeFit::Unknown}, CodeFit::Sass},
      {"8.9", {CodeFit::Sass, CodeFit::Sass, CodeFit::Sass, CodeFit::Unknown}, CodeFit::Sass},
      {"9.0", {CodeFit::Sass, CodeFit::Sass, CodeFit::None, CodeFit::Unknown}, CodeFit::None},
      {"10.0", {CodeFit::None, CodeFit::Ptx, CodeFit::None, CodeFit::Unknown}, CodeFit::None},
      {"7.5", {CodeFit::None, CodeFit::None, CodeFit::None, CodeFit::Unknown}, CodeFit::None},
  };
  for (const auto& c : cases) {
    auto v = judgeGpuCode(code, c.cap);
    ASSERT_EQ(v.size(), code.size());
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(v[i].fit, c.want[i]) << code[i].library << " on " << c.cap;
      EXPECT_EQ(v[i].library, code[i].library);
    }
    EXPECT_EQ(worstFit(v), c.worst) << c.cap;
  }
  auto b200 = judgeGpuCode(code, "10.0");
  EXPECT_EQ(b200[1].covering, std::vector<std::string>{"compute_90"});
  std::string why = explainVerdict(b200[0], "B200 (10.0)", "10.0");
  EXPECT_NE(why.find("/torch/lib/libtorch_cuda.so cannot run on B200 (10.0)"), std::string::npos) << why;
  EXPECT_NE(why.find("SASS sm_80, sm_90; PTX none"), std::string::npos) << why;
  EXPECT_NE(why.find("SASS sm_100 or sm_100a, or PTX compute_100 or older"), std::string::npos) << why;
  std::string jit = explainVerdict(b200[1], "B200 (10.0)", "10.0");
  EXPECT_NE(jit.find("JIT-compiles its PTX compute_90"), std::string::npos) << jit;
  EXPECT_EQ(worstFit({}), CodeFit::Unknown);
  EXPECT_EQ(codeNeededBy("8.9"), "SASS sm_80 to sm_89, or PTX compute_89 or older");
}

TEST(GpuCodeJudge, GenerationSupportSaysWhereAnImageRuns) {
  EXPECT_TRUE(generationSupport({}).empty());
  // torch 2.x cu121-style: sm_50..sm_90 SASS, PTX only for 9.0.
  auto gens = generationSupport({lib("/t/libtorch_cuda.so", {"sm_70", "sm_75", "sm_80", "sm_86", "sm_90"}, {"compute_90"})});
  std::map<std::string, std::string> fit;
  for (const auto& g : gens) fit[g["generation"]] = g["fit"];
  EXPECT_EQ(fit, (std::map<std::string, std::string>{{"Volta", "sass"}, {"Turing", "sass"}, {"Ampere", "sass"},
                                                       {"Ada", "sass"}, {"Hopper", "sass"}, {"Blackwell", "ptx"}}));
  // SASS for the data-centre Blackwell only, no PTX: 12.x cannot, so Blackwell is partial.
  gens = generationSupport({lib("/t/libtorch_cuda.so", {"sm_80", "sm_90", "sm_100"}, {})});
  for (const auto& g : gens) fit[g["generation"]] = g["fit"];
  EXPECT_EQ(fit["Volta"], "none");
  EXPECT_EQ(fit["Ada"], "sass");
  EXPECT_EQ(fit["Blackwell"], "partial");
  const auto& bw = gens.back();
  EXPECT_EQ(bw["capabilities"]["10.0"], "sass");
  EXPECT_EQ(bw["capabilities"]["10.3"], "sass");
  EXPECT_EQ(bw["capabilities"]["12.0"], "none");
  EXPECT_EQ(bw["cannot_run"], nlohmann::json::array({"/t/libtorch_cuda.so"}));
  gens = generationSupport({lib("/t/x.so", {"bogus"}, {})});
  for (const auto& g : gens) EXPECT_EQ(g["fit"], "unknown");
}

TEST(GpuModels, ParsesCapabilitiesArchitecturesAndModelNames) {
  struct Case {
    const char* text;
    const char* cap;
  } cases[] = {
      {"9.0", "9.0"},          {"12.0", "12.0"},        {"sm_120", "12.0"},      {"sm_90a", "9.0"},
      {"SM_100f", "10.0"},     {"sm_75", "7.5"},        {"H100", "9.0"},         {"h200", "9.0"},
      {"NVIDIA H100 80GB HBM3", "9.0"}, {"GH200", "9.0"}, {"H20", "9.0"},        {"H800", "9.0"},
      {"B200", "10.0"},        {"B100", "10.0"},        {"GB200", "10.0"},       {"GB300", "10.3"},
      {"B300", "10.3"},        {"NVIDIA B300 SXM6 AC", "10.3"}, {"RTX 5090", "12.0"}, {"GeForce RTX 5080", "12.0"},
      {"RTX PRO 6000 Blackwell", "12.0"}, {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"},
      {"RTX PRO 4000 Blackwell", "12.0"}, {"GB10", "12.1"}, {"L40S", "8.9"},     {"L40", "8.9"},
      {"L4", "8.9"},           {"L20", "8.9"},          {"RTX 4090", "8.9"},     {"RTX 6000 Ada", "8.9"},
      {"NVIDIA RTX 6000 Ada Generation", "8.9"}, {"RTX 5000 Ada Generation", "8.9"},
      {"RTX 4000 SFF Ada Generation", "8.9"}, {"A100", "8.0"}, {"NVIDIA A100-SXM4-80GB", "8.0"},
      {"A800", "8.0"},         {"A30", "8.0"},          {"A10", "8.6"},          {"A10G", "8.6"},
      {"A40", "8.6"},          {"A16", "8.6"},          {"A2", "8.6"},           {"RTX A6000", "8.6"},
      {"NVIDIA RTX A4000", "8.6"}, {"RTX 3090", "8.6"}, {"T4", "7.5"},           {"Tesla T4", "7.5"},
      {"Quadro RTX 6000", "7.5"}, {"Quadro RTX 5000", "7.5"}, {"Quadro RTX 4000", "7.5"}, {"TITAN RTX", "7.5"},
      {"NVIDIA T1000 8GB", "7.5"}, {"T400", "7.5"},     {"RTX 2080 Ti", "7.5"},  {"V100", "7.0"},
      {"Tesla V100-SXM2-16GB", "7.0"}, {"V100S", "7.0"}, {"Quadro GV100", "7.0"}, {"TITAN V", "7.0"},
  };
  for (const auto& c : cases) {
    auto t = parseGpuTarget(c.text);
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.error().message;
    EXPECT_EQ(t->capability, c.cap) << c.text;
  }
  for (const char* bad : {"", "H", "9", "9.10", "sm_9", "sm_0x", "compute_90", "RTX 6000", "Radeon", "1.0", "gfx942"}) {
    auto t = parseGpuTarget(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.error().message.find("'" + std::string(bad) + "' is not a GPU"), std::string::npos);
    EXPECT_NE(t.error().message.find("sm_90"), std::string::npos);  // the accepted forms are listed
  }
}

TEST(GpuModels, PciDeviceIdsAndGenerations) {
  struct Case {
    uint32_t id;
    const char* cap;
    const char* gen;
  } cases[] = {
      {0x1db4, "7.0", "Volta"},     {0x1df6, "7.0", "Volta"},  {0x1eb8, "7.5", "Turing"},   {0x1e30, "7.5", "Turing"},
      {0x20b2, "8.0", "Ampere"},    {0x20b7, "8.0", "Ampere"}, {0x2236, "8.6", "Ampere"},   {0x2230, "8.6", "Ampere"},
      {0x25b6, "8.6", "Ampere"},    {0x26b9, "8.9", "Ada"},    {0x27b8, "8.9", "Ada"},      {0x26b1, "8.9", "Ada"},
      {0x2330, "9.0", "Hopper"},    {0x2335, "9.0", "Hopper"}, {0x2342, "9.0", "Hopper"},   {0x2901, "10.0", "Blackwell"},
      {0x2941, "10.0", "Blackwell"}, {0x3182, "10.3", "Blackwell"}, {0x31c2, "10.3", "Blackwell"},
      {0x2bb1, "12.0", "Blackwell"}, {0x2bb5, "12.0", "Blackwell"}, {0x2e12, "12.1", "Blackwell"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(std::string(gpuForPciDevice(c.id).capability), c.cap) << std::hex << c.id;
    EXPECT_EQ(generationOf(c.cap), c.gen) << c.cap;
    // The model the id names maps back to the same capability through the name table.
    EXPECT_EQ(capabilityForModel(gpuForPciDevice(c.id).model), c.cap) << gpuForPciDevice(c.id).model;
  }
  EXPECT_EQ(std::string(gpuForPciDevice(0x1234).capability), "");
  EXPECT_EQ(std::string(gpuForPciDevice(0x2b85).capability), "");  // GeForce RTX 5090: not a data-centre row
  EXPECT_EQ(generationOf("6.1"), "Pascal");
  EXPECT_EQ(generationOf("11.0"), "Blackwell");
  EXPECT_EQ(generationOf("x"), "");
  auto gens = judgedGenerations();
  ASSERT_EQ(gens.size(), 6u);
  EXPECT_STREQ(gens.front().name, "Volta");
  EXPECT_STREQ(gens.back().name, "Blackwell");
}

}  // namespace gpu_gpu_code_judge_test
