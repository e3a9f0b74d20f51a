#include <gtest/gtest.h>

#include "kernodeck/host/host_facts.h"

namespace host_parsers_test {

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

TEST(HostParsers, PciAddressesOfAnyDomain) {
  auto a = parsePciAddress("0009:01:00.0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->domain, 9u);
  EXPECT_EQ(a->bus, 1u);
  EXPECT_EQ(a->device, 0u);
  EXPECT_EQ(a->function, 0u);
  auto b = parsePciAddress("0019:1f:1c.7");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->domain, 0x19u);
  EXPECT_EQ(b->bus, 0x1fu);
  EXPECT_EQ(b->device, 0x1cu);
  EXPECT_EQ(b->function, 7u);
  EXPECT_EQ(parsePciAddress("10000:e1:00.0")->domain, 0x10000u);  // a VMD domain
  EXPECT_EQ(parsePciAddress("0000:18:00.0")->bus, 0x18u);
  for (const char* bad : {"", "01:00.0", "0009:01:00", "0009:01:00.8", "0009:01:20.0", "0009:01:00.0/../x",
                          "../0009:01:00.0", "0009:1:00.0", " 0009:01:00.0", "0009:01:00.0 "})
    EXPECT_FALSE(parsePciAddress(bad)) << bad;
}

TEST(HostParsers, PciDeviceIdsOfGrace) {
  EXPECT_EQ(archForPciDevice(0x2342), "9.0");   // GH200 480GB
  EXPECT_EQ(archForPciDevice(0x2348), "9.0");   // GH200 144G HBM3e
  EXPECT_EQ(archForPciDevice(0x2941), "10.0");  // GB200
  EXPECT_EQ(archForPciDevice(0x2901), "10.0");  // B200
  EXPECT_EQ(archForPciDevice(0x1234), "");
  EXPECT_EQ(inferArchAndBrand("NVIDIA GH200 480GB").first, "9.0");
  EXPECT_EQ(inferArchAndBrand("NVIDIA GB200").first, "10.0");
}

TEST(HostParsers, HostTablesCoverVoltaToBlackwell) {
  // Device ids as the driver's /sys/bus/pci/devices/*/device gives them (NVIDIA's
  // open-gpu-kernel-modules list, pci.ids), and the model names nvidia-smi prints.
  EXPECT_EQ(archForPciDevice(0x1db5), "7.0");   // Tesla V100 SXM2 32GB
  EXPECT_EQ(archForPciDevice(0x1eb8), "7.5");   // Tesla T4
  EXPECT_EQ(archForPciDevice(0x20b2), "8.0");   // A100-SXM4-80GB
  EXPECT_EQ(archForPciDevice(0x2236), "8.6");   // A10
  EXPECT_EQ(archForPciDevice(0x26b9), "8.9");   // L40S
  EXPECT_EQ(archForPciDevice(0x2330), "9.0");   // H100 80GB HBM3
  EXPECT_EQ(archForPciDevice(0x2335), "9.0");   // H200
  EXPECT_EQ(archForPciDevice(0x3182), "10.3");  // B300 SXM6 AC
  EXPECT_EQ(archForPciDevice(0x31c2), "10.3");  // GB300
  EXPECT_EQ(archForPciDevice(0x2bb5), "12.0");  // RTX PRO 6000 Blackwell Server Edition
  struct Case {
    const char* model;
    const char* arch;
    const char* brand;
  } cases[] = {
      {"Tesla V100-SXM2-32GB", "7.0", "tesla"},
      {"Quadro RTX 6000", "7.5", "quadro"},
      {"NVIDIA RTX A6000", "8.6", ""},
      {"NVIDIA RTX 6000 Ada Generation", "8.9", ""},
      {"NVIDIA GeForce RTX 4090", "8.9", "geforce"},
      {"NVIDIA GeForce RTX 5090", "12.0", "geforce"},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", ""},
      {"NVIDIA B300 SXM6 AC", "10.3", "nvidia"},
      {"NVIDIA GB300", "10.3", "nvidia"},
      {"NVIDIA GeForce GTX 1080", "", "geforce"},
  };
  for (const auto& c : cases)
    EXPECT_EQ(inferArchAndBrand(c.model), (std::pair<std::string, std::string>{c.arch, c.brand})) << c.model;
}

TEST(HostParsers, TegraRelease) {
  EXPECT_EQ(parseTegraRelease("# R36 (release), REVISION: 3.0, GCID: 36923193, BOARD: generic, EABI: aarch64\n"),
            "R36.3.0");
  EXPECT_EQ(parseTegraRelease("# R32 (release), REVISION: 7.4, GCID: 33514132, BOARD: t210ref, EABI: aarch64"),
            "R32.7.4");
  EXPECT_EQ(parseTegraRelease("# R35 (release)"), "R35");
  EXPECT_FALSE(parseTegraRelease("R36 (release)"));
  EXPECT_FALSE(parseTegraRelease("# Rx"));
  EXPECT_FALSE(parseTegraRelease(""));
}

}  // namespace host_parsers_test
