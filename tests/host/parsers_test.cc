#include <gtest/gtest.h>

#include "kernodeck/host/host_facts.h"

using namespace kernodeck::host;

TEST(HostParsers, NvidiaVersionBothModules) {
  auto closed = parseNvidiaVersion(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\nGCC version: x\n");
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed->version, "535.104.05");
  EXPECT_FALSE(closed->openModule);
  auto open = parseNvidiaVersion(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (dvs-builder@U16)  Thu Mar "
      "14\n");
  ASSERT_TRUE(open);
  EXPECT_EQ(open->version, "550.54.15");
  EXPECT_TRUE(open->openModule);
  auto arm = parseNvidiaVersion("NVRM version: NVIDIA UNIX aarch64 Kernel Module  525.85.12  Sat Jan 28\n");
  ASSERT_TRUE(arm);
  EXPECT_EQ(arm->version, "525.85.12");
  EXPECT_FALSE(parseNvidiaVersion(""));
  EXPECT_FALSE(parseNvidiaVersion("garbage\x01\x02"));
}

TEST(HostParsers, GpuInformation) {
  auto g = parseGpuInformation(
      "Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-abc\nBus Location: \t 0000:18:00.0\nDevice Minor: \t 3\nGPU "
      "Excluded:\t Yes\n");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g->uuid, "GPU-abc");
  EXPECT_EQ(g->minor, 3);
  EXPECT_TRUE(g->excluded);
  EXPECT_EQ(g->arch, "9.0");
  EXPECT_FALSE(parseGpuInformation("nothing useful"));
  auto bad = parseGpuInformation("Model: X\nDevice Minor: 99999999999999999999\n");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->minor, -1);
}

TEST(HostParsers, ProcDevicesCharacterOnly) {
  auto d = parseProcDevices(
      "Character devices:\n  1 mem\n195 nvidia-frontend\n508 nvidia-uvm\n\nBlock devices:\n  8 sd\n259 blkext\n");
  EXPECT_EQ(d["nvidia-frontend"], 195);
  EXPECT_EQ(d["nvidia-uvm"], 508);
  EXPECT_EQ(d.count("sd"), 0u);
}

TEST(HostParsers, MigMinors) {
  auto m = parseMigMinors(
      "config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\ngpu7/gi14/ci7/access 999\nbogus line\n");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].gi, 1);
  EXPECT_EQ(m[0].ci, -1);
  EXPECT_EQ(m[1].ci, 0);
  EXPECT_EQ(m[2].gpu, 7);
  EXPECT_EQ(m[2].minor, 999);
}

TEST(HostParsers, KfdAndGfxNames) {
  auto p = parseKfdProperties("simd_count 1216\ngfx_target_version 90402\ndrm_render_minor 128\n");
  EXPECT_EQ(p["gfx_target_version"], 90402u);
  EXPECT_EQ(p["drm_render_minor"], 128u);
  EXPECT_EQ(gfxName(90402), "gfx942");
  EXPECT_EQ(gfxName(90010), "gfx90a");
  EXPECT_EQ(gfxName(110000), "gfx1100");
  EXPECT_EQ(gfxName(0), "");
}

TEST(HostParsers, InferArchAndBrand) {
  EXPECT_EQ(inferArchAndBrand("NVIDIA H200").first, "9.0");
  EXPECT_EQ(inferArchAndBrand("NVIDIA A100-SXM4-80GB").first, "8.0");
  EXPECT_EQ(inferArchAndBrand("Tesla T4"), (std::pair<std::string, std::string>{"7.5", "tesla"}));
  EXPECT_EQ(inferArchAndBrand("NVIDIA L40S").first, "8.9");
  EXPECT_EQ(inferArchAndBrand("Mystery GPU").first, "");
}

// Found by the procfs fuzz target: a huge GI number must not throw.
TEST(HostParsers, MigMinorsWithHugeNumbersAreSkipped) {
  auto m = parseMigMinors("gpu0/gi" + std::string(60, '4') +
                          "/ci0/access 13\ngpu0/gi1/access 99999999999\ngpu1/gi2/access 7\n");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].gpu, 1);
  EXPECT_EQ(m[0].minor, 7);
}
