#include "kernodeck/host/host_facts.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "fixture.h"

namespace host_host_facts_test {

using namespace kernodeck::host;

// The fixture trees are read through a fixture HostFs: their device nodes are described in
// dev.list, so these tests need no root.
class HostFactsTest : public ::testing::Test {};

using kdktest::fixtureDir;
using kdktest::fixtureFacts;

TEST_F(HostFactsTest, H100OnOpenModule550) {
  HostFacts h = fixtureFacts(fixtureDir("h100-550-open"));
  ASSERT_TRUE(h.nvidia);
  EXPECT_EQ(h.nvidia->version, "550.54.15");
  EXPECT_TRUE(h.nvidia->openModule);
  EXPECT_EQ(h.maxCuda, "12.4");
  ASSERT_EQ(h.gpus.size(), 2u);
  EXPECT_EQ(h.gpus[1].minor, 1);
  for (const auto& n : h.nodes) EXPECT_EQ(n.problem, "") << n.path;
  EXPECT_TRUE(h.devCharMissing.empty());
  EXPECT_TRUE(h.problems.empty());
  EXPECT_FALSE(h.amdDriver);
}

TEST_F(HostFactsTest, A100WithMig) {
  HostFacts h = fixtureFacts(fixtureDir("a100-mig"));
  ASSERT_TRUE(h.nvidia);
  EXPECT_EQ(h.maxCuda, "12.2");
  EXPECT_EQ(h.mig.size(), 4u);
  ASSERT_TRUE(h.node("/dev/nvidia-caps/nvidia-cap12"));
  EXPECT_EQ(h.node("/dev/nvidia-caps/nvidia-cap12")->problem, "");
}

// Grace nodes (arm64): the open module built for aarch64, GPUs in PCI domains other than 0000.
TEST_F(HostFactsTest, GraceHopperAndGraceBlackwell) {
  HostFacts gh = fixtureFacts(fixtureDir("gh200-550-open"));
  ASSERT_TRUE(gh.nvidia);
  EXPECT_EQ(gh.nvidia->version, "550.90.07");
  EXPECT_TRUE(gh.nvidia->openModule);
  EXPECT_EQ(gh.maxCuda, "12.4");
  ASSERT_EQ(gh.gpus.size(), 1u);
  EXPECT_EQ(gh.gpus[0].busLocation, "0009:01:00.0");
  EXPECT_EQ(gh.gpus[0].arch, "9.0");
  EXPECT_EQ(gh.gpus[0].pciDevice, "0x2342");
  for (const auto& n : gh.nodes) EXPECT_EQ(n.problem, "") << n.path;
  EXPECT_TRUE(gh.problems.empty());
  EXPECT_EQ(fixtureFacts(fixtureDir("gh200-570-open")).maxCuda, "12.8");

  HostFacts gb = fixtureFacts(fixtureDir("gb200-570-open"));
  ASSERT_TRUE(gb.nvidia);
  EXPECT_EQ(gb.maxCuda, "12.8");
  ASSERT_EQ(gb.gpus.size(), 4u);
  std::vector<std::string> buses;
  for (const auto& g : gb.gpus) {
    buses.push_back(g.busLocation);
    EXPECT_EQ(g.arch, "10.0") << g.busLocation;
  }
  EXPECT_EQ(buses, (std::vector<std::string>{"0008:01:00.0", "0009:01:00.0", "0018:01:00.0", "0019:01:00.0"}));
  EXPECT_EQ(gb.gpus[3].minor, 3);
  EXPECT_TRUE(gb.node("/dev/nvidia-caps-imex-channels/channel0"));
  EXPECT_TRUE(gb.devCharMissing.empty());
  EXPECT_FALSE(gb.tegra);
}

// A driver older than its GPU names it "NVIDIA Graphics Device": the PCI device id still tells
// its compute capability; an id not in the table leaves it unknown, never guessed.
TEST_F(HostFactsTest, UnnamedGpuIsKnownByItsPciDeviceId) {
  std::string dir = kdktest::fixtureCopy("gh200-550-open");
  ASSERT_FALSE(dir.empty());
  std::string info = dir + "/proc/driver/nvidia/gpus/0009:01:00.0/information";
  std::string text = kdktest::readText(info);
  text.replace(text.find("NVIDIA GH200 480GB"), 18, "NVIDIA Graphics Device");
  std::ofstream(info) << text;
  HostFacts h = fixtureFacts(dir);
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].model, "NVIDIA Graphics Device");
  EXPECT_EQ(h.gpus[0].arch, "9.0");
  std::ofstream(dir + "/sys/bus/pci/devices/0009:01:00.0/device") << "0x1234\n";
  EXPECT_EQ(fixtureFacts(dir).gpus[0].arch, "");
}

// A Jetson (L4T): no nvidia.ko, an integrated GPU through nvgpu and CSV mounts. Detected, so
// that it is never "a CPU-only node" or "no NVIDIA driver".
TEST_F(HostFactsTest, JetsonIsDetectedNotMistakenForCpuOnly) {
  HostFacts h = fixtureFacts(fixtureDir("jetson-orin-l4t"));
  EXPECT_FALSE(h.nvidia);
  ASSERT_TRUE(h.tegra);
  EXPECT_EQ(h.tegra->release, "R36.3.0");
  EXPECT_TRUE(h.tegra->nvgpu);
  EXPECT_EQ(h.tegra->csvs, (std::vector<std::string>{"l4t.csv"}));
  EXPECT_EQ(h.toText().find("CPU-only"), std::string::npos) << h.toText();
  EXPECT_NE(h.toText().find("NVIDIA Jetson (L4T R36.3.0, nvgpu)"), std::string::npos) << h.toText();
  EXPECT_EQ(h.toJson()["tegra"]["release"], "R36.3.0");
  EXPECT_FALSE(fixtureFacts(fixtureDir("cpu-only")).tegra);
}

// A real host, read by scripts/gpu-check (tests/fixtures/hosts/h200-580-fc/README.md).
TEST_F(HostFactsTest, RealH200OnFirecracker) {
  HostFacts h = fixtureFacts(fixtureDir("h200-580-fc"));
  ASSERT_TRUE(h.nvidia);
  EXPECT_EQ(h.nvidia->version, "580.159.04");
  EXPECT_TRUE(h.nvidia->openModule);
  EXPECT_EQ(h.sysModuleVersion, "580.159.04");
  EXPECT_EQ(h.maxCuda, "13.0");
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].model, "NVIDIA H200");
  EXPECT_EQ(h.gpus[0].arch, "9.0");
  EXPECT_EQ(h.gpus[0].uuid, "GPU-257f7783-60ea-68c9-22ec-6bcc2b22c546");
  EXPECT_EQ(h.gpus[0].minor, 0);
  EXPECT_FALSE(h.gpus[0].excluded);
  for (const char* path : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}) {
    ASSERT_TRUE(h.node(path)) << path;
    EXPECT_EQ(h.node(path)->problem, "") << path;
  }
  EXPECT_EQ(h.node("/dev/nvidia-uvm")->major, 238);
  EXPECT_FALSE(h.node("/dev/nvidia-modeset"));  // optional: display only
  // The driver lists all 4,320 possible MIG capabilities, but MIG is not enabled.
  EXPECT_TRUE(h.mig.empty());
  EXPECT_LT(h.toJson().dump().size(), 4096u);
  EXPECT_EQ(h.devCharMissing.size(), 6u);  // that VM has no /dev/char links
  EXPECT_TRUE(h.problems.empty());
}

TEST_F(HostFactsTest, MigInstancesAreThoseWithCapabilityFiles) {
  std::string root = kdktest::fixtureCopy("a100-mig");
  ASSERT_GT(std::filesystem::remove_all(root + "/proc/driver/nvidia/capabilities/gpu0/mig/gi2"), 0u);
  HostFacts h = fixtureFacts(root);
  ASSERT_EQ(h.mig.size(), 2u);
  EXPECT_EQ(h.mig[0].gi, 1);
  EXPECT_EQ(h.mig[0].ci, -1);
  EXPECT_EQ(h.mig[0].minor, 12);
  EXPECT_EQ(h.mig[1].ci, 0);
  EXPECT_EQ(h.mig[1].minor, 13);
}

TEST_F(HostFactsTest, Driver470) {
  HostFacts h = fixtureFacts(fixtureDir("driver-470"));
  ASSERT_TRUE(h.nvidia);
  EXPECT_EQ(h.maxCuda, "11.4");
  EXPECT_EQ(h.gpus[0].brand, "tesla");
}

TEST_F(HostFactsTest, MissingUvmIsAProblem) {
  HostFacts h = fixtureFacts(fixtureDir("no-uvm"));
  ASSERT_TRUE(h.node("/dev/nvidia-uvm"));
  EXPECT_EQ(h.node("/dev/nvidia-uvm")->problem, "missing");
  EXPECT_EQ(h.node("/dev/nvidiactl")->problem, "");
  EXPECT_FALSE(h.devCharMissing.empty());
}

TEST_F(HostFactsTest, AmdMi300) {
  HostFacts h = fixtureFacts(fixtureDir("mi300"));
  EXPECT_FALSE(h.nvidia);
  EXPECT_TRUE(h.amdDriver);
  ASSERT_EQ(h.amdAgents.size(), 1u);  // the CPU agent is not a GPU
  EXPECT_EQ(h.amdAgents[0].gfx, "gfx942");
  EXPECT_EQ(h.amdAgents[0].renderMinor, 128);
  ASSERT_TRUE(h.node("/dev/kfd"));
  EXPECT_EQ(h.node("/dev/kfd")->problem, "");
  EXPECT_EQ(h.node("/dev/dri/renderD128")->problem, "");
}

TEST_F(HostFactsTest, CpuOnlyAndEmptyRoot) {
  HostFacts h = fixtureFacts(fixtureDir("cpu-only"));
  EXPECT_FALSE(h.nvidia);
  EXPECT_FALSE(h.amdDriver);
  EXPECT_NE(h.toText().find("CPU-only"), std::string::npos);
  HostFacts none = readHostFacts("/nonexistent-root");
  EXPECT_FALSE(none.nvidia);
}

TEST_F(HostFactsTest, WrongDeviceNumbersAreReported) {
  std::string root = kdktest::fixtureCopy("h100-550-open");
  std::string list = kdktest::readText(root + "/dev.list");
  size_t at = list.find("c 195 1 dev/nvidia1\n");
  ASSERT_NE(at, std::string::npos);
  list.replace(at, 19, "c 195 7 dev/nvidia1");
  std::ofstream(root + "/dev.list") << list;
  HostFacts h = fixtureFacts(root);
  EXPECT_EQ(h.node("/dev/nvidia1")->problem, "is 195:7, expected 195:1");
}

TEST(HostFs, FixtureDescribesNodesAndLinksInAFile) {
  std::string root = kdktest::fixtureCopy("cpu-only");
  std::ofstream(root + "/dev.list")
      << "c 195 0 dev/nvidia0\nc 511 1 dev/nvidia-caps/nvidia-cap1\nl ../nvidia0 dev/char/195:0\n\n";
  auto fs = fixtureHostFs(root);
  ASSERT_TRUE(fs.ok()) << fs.error().message;
  NodeStat gpu = (*fs)->lstat("/dev/nvidia0");
  EXPECT_TRUE(gpu.exists && gpu.isChar);
  EXPECT_EQ(gpu.major, 195);
  EXPECT_EQ(gpu.minor, 0);
  NodeStat link = (*fs)->lstat("/dev/char/195:0");
  EXPECT_TRUE(link.exists && !link.isChar);
  EXPECT_FALSE((*fs)->lstat("/dev/nvidia1").exists);
  EXPECT_EQ((*fs)->list("/dev/nvidia-caps"), std::vector<std::string>{"nvidia-cap1"});
  EXPECT_FALSE((*fs)->read("/dev/nvidia0", 100));  // a device is never read
  EXPECT_TRUE((*fs)->read("/proc/devices", 1 << 20));
  for (const char* bad : {"c 195 dev/x\n", "b 8 0 dev/sda\n", "c x 0 dev/y\n", "c 195 0 dev/z allowed\n"}) {
    std::ofstream(root + "/dev.list") << bad;
    auto b = fixtureHostFs(root);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.error().message.find("dev.list:1"), std::string::npos) << b.error().message;
  }
}

// The probe opens the container's nodes: in a fixture a node opens unless marked denied (EPERM,
// as a device cgroup answers), a link opens as the node it names, and anything else is missing.
TEST(HostFs, FixtureOpensNodesUnlessDenied) {
  std::string root = kdktest::fixtureCopy("cpu-only");
  std::ofstream(root + "/dev.list") << "c 195 0 dev/nvidia0\nc 195 1 dev/nvidia1 denied\nl ../nvidia0 dev/char/195:0\n"
                                       "l ../nvidia1 dev/char/195:1\nl ../nvidia9 dev/char/195:9\n";
  auto fs = fixtureHostFs(root);
  ASSERT_TRUE(fs.ok()) << fs.error().message;
  struct Case {
    const char* path;
    bool exists;
    int error;
  };
  for (const Case& c :
       {Case{"/dev/nvidia0", true, 0}, Case{"/dev/nvidia1", true, EPERM}, Case{"/dev/char/195:0", true, 0},
        Case{"/dev/char/195:1", true, EPERM}, Case{"/dev/char/195:9", false, 0}, Case{"/dev/nvidia2", false, 0}}) {
    DeviceOpen d = (*fs)->openDevice(c.path);
    EXPECT_EQ(d.exists, c.exists) << c.path;
    EXPECT_EQ(d.error, c.error) << c.path;
  }
  EXPECT_TRUE(diskHostFs(root)->openDevice("/proc/devices").exists);  // on disk: stat, then a real open
  EXPECT_FALSE(diskHostFs(root)->openDevice("/dev/nvidia0").exists);
}

// The seam is faithful: a fixture read through its dev.list gives the same facts as the same
// tree materialised with real device nodes (which needs root, so this one test skips without).
TEST(HostFs, FixtureAndMaterialisedTreeAgree) {
  if (::geteuid() != 0) GTEST_SKIP() << "materialising device nodes needs root";
  for (const char* name : {"h100-550-open", "a100-mig", "h200-580-fc", "driver-470", "no-uvm", "mi300", "cpu-only"}) {
    char tmpl[] = "/tmp/kdk-host-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    std::string dest = std::string(tmpl) + "/" + name;
    std::string cmd = std::string(SOURCE_DIR) + "/tests/fixtures/hosts/materialize " + name + " " + dest;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << name;
    nlohmann::json disk = readHostFacts(dest).toJson(), fixture = fixtureFacts(fixtureDir(name)).toJson();
    disk.erase("root");
    fixture.erase("root");
    EXPECT_EQ(disk, fixture) << name;
    std::filesystem::remove_all(tmpl);
  }
}

}  // namespace host_host_facts_test
