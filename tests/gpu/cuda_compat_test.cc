#include "kernodeck/gpu/cuda_compat.h"

#include <gtest/gtest.h>

namespace gpu_cuda_compat_test {

using namespace kernodeck::gpu;

TEST(CudaCompat, CompareVersions) {
  struct Case {
    const char* a;
    const char* b;
    int want;
  } cases[] = {
      {"470.57.02", "470.8", 1},     {"12.1", "12.1.0", 0}, {"11.8", "12.0", -1},
      {"525.60.13", "525.60.13", 0}, {"10", "9.9", 1},      {"1.2.3", "1.2.10", -1},
  };
  for (const auto& c : cases) EXPECT_EQ(compareVersions(c.a, c.b), c.want) << c.a << " vs " << c.b;
  EXPECT_EQ(majorMinor("12.1.105"), "12.1");
  EXPECT_EQ(majorMinor("12"), "12.0");
}

TEST(CudaCompat, MaxCudaForDriver) {
  struct Case {
    const char* driver;
    const char* max;
  } cases[] = {
      {"470.199.02", "11.4"}, {"535.104.05", "12.2"}, {"550.54.15", "12.4"}, {"525.60.13", "12.0"},
      {"525.60.12", "11.8"},  {"580.65.06", "13.0"},  {"400.1", ""},
  };
  for (const auto& c : cases) EXPECT_EQ(maxCudaForDriver(c.driver), c.max) << c.driver;
}

TEST(CudaCompat, CheckCuda) {
  struct Case {
    const char* driver;
    const char* cuda;
    std::vector<std::string> compat;
    CudaSupport want;
  } cases[] = {
      {"550.54.15", "12.1", {}, CudaSupport::Native},
      {"535.104.05", "12.4", {}, CudaSupport::MinorVersionCompat},
      {"470.199.02", "11.8", {}, CudaSupport::MinorVersionCompat},
      {"470.199.02", "12.1", {}, CudaSupport::Unsupported},
      {"470.199.02", "12.1", {"470"}, CudaSupport::ForwardCompat},
      {"470.199.02", "12.1", {"535"}, CudaSupport::Unsupported},  // compat lists other branches only
      {"450.36.06", "11.2", {}, CudaSupport::Unsupported},        // below the 11.x minor-compat floor
  };
  for (const auto& c : cases)
    EXPECT_EQ(checkCuda(c.driver, c.cuda, c.compat).support, c.want) << c.driver << " / " << c.cuda;
}

TEST(CudaCompat, ArchRunsOn) {
  // torch 2.11.0+cu130's list, as scripts/gpu-check read it on an H200.
  std::vector<std::string> cu130 = {"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"};
  struct Case {
    std::vector<std::string> list;
    const char* gpu;
    std::optional<bool> want;
  } cases[] = {
      {cu130, "9.0", true},
      {cu130, "8.9", true},    // L4: sm_86 machine code runs on 8.9
      {cu130, "12.1", true},   // sm_120 on 12.1
      {cu130, "7.0", false},   // V100: below every entry
      {cu130, "11.0", false},  // no 11.x code and no PTX
      {{"sm_80", "sm_86"}, "9.0", false},
      {{"sm_80", "compute_80"}, "9.0", true},  // PTX JIT-compiles forward
      {{"sm_90a"}, "9.0", true},
      {{"sm_90a"}, "10.0", false},  // arch-specific code runs on its own GPU only
      {{"sm_100f"}, "10.3", true},
      {{"sm_999"}, "9.0", false},
      {{}, "9.0", std::nullopt},
      {cu130, "", std::nullopt},
      {{"garbage", "sm_"}, "9.0", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(archRunsOn(c.list, c.gpu), c.want) << c.gpu << " / " << c.list.size();
  EXPECT_EQ(smName("9.0"), "sm_90");
  EXPECT_EQ(smName("12.0"), "sm_120");
  EXPECT_EQ(smName("x"), "");
}

}  // namespace gpu_cuda_compat_test
