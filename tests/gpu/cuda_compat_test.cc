#include "kernodeck/gpu/cuda_compat.h"

#include <gtest/gtest.h>

using namespace kernodeck::gpu;

TEST(CudaCompat, CompareVersions) {
  struct Case { const char* a; const char* b; int want; } cases[] = {
      {"470.57.02", "470.8", 1}, {"12.1", "12.1.0", 0}, {"11.8", "12.0", -1}, {"525.60.13", "525.60.13", 0},
      {"10", "9.9", 1},          {"1.2.3", "1.2.10", -1},
  };
  for (const auto& c : cases) EXPECT_EQ(compareVersions(c.a, c.b), c.want) << c.a << " vs " << c.b;
  EXPECT_EQ(majorMinor("12.1.105"), "12.1");
  EXPECT_EQ(majorMinor("12"), "12.0");
}

TEST(CudaCompat, MaxCudaForDriver) {
  struct Case { const char* driver; const char* max; } cases[] = {
      {"470.199.02", "11.4"}, {"535.104.05", "12.2"}, {"550.54.15", "12.4"}, {"525.60.13", "12.0"},
      {"525.60.12", "11.8"},  {"580.65.06", "13.0"},  {"400.1", ""},
  };
  for (const auto& c : cases) EXPECT_EQ(maxCudaForDriver(c.driver), c.max) << c.driver;
}

TEST(CudaCompat, CheckCuda) {
  struct Case { const char* driver; const char* cuda; std::vector<std::string> compat; CudaSupport want; } cases[] = {
      {"550.54.15", "12.1", {}, CudaSupport::Native},
      {"535.104.05", "12.4", {}, CudaSupport::MinorVersionCompat},
      {"470.199.02", "11.8", {}, CudaSupport::MinorVersionCompat},
      {"470.199.02", "12.1", {}, CudaSupport::Unsupported},
      {"470.199.02", "12.1", {"470"}, CudaSupport::ForwardCompat},
      {"470.199.02", "12.1", {"535"}, CudaSupport::Unsupported},  // compat lists other branches only
      {"450.36.06", "11.2", {}, CudaSupport::Unsupported},        // below the 11.x minor-compat floor
  };
  for (const auto& c : cases) EXPECT_EQ(checkCuda(c.driver, c.cuda, c.compat).support, c.want) << c.driver << " / " << c.cuda;
}
