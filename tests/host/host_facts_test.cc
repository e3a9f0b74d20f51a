#include "kernodeck/host/host_facts.h"

#include <gtest/gtest.h>

#include "fixture.h"

using namespace kernodeck::host;

class HostFactsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kdktest::isRoot()) GTEST_SKIP() << "fake /dev trees need mknod (root)";
  }
};

TEST_F(HostFactsTest, H100OnOpenModule550) {
  HostFacts h = readHostFacts(kdktest::hostFixture("h100-550-open"));
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
  HostFacts h = readHostFacts(kdktest::hostFixture("a100-mig"));
  ASSERT_TRUE(h.nvidia);
  EXPECT_EQ(h.maxCuda, "12.2");
  EXPECT_EQ(h.mig.size(), 4u);
  ASSERT_TRUE(h.node("/dev/nvidia-caps/nvidia-cap12"));
  EXPECT_EQ(h.node("/dev/nvidia-caps/nvidia-cap12")->problem, "");
}

// A real host, read by scripts/gpu-check (tests/fixtures/hosts/h200-580-fc/README.md).
TEST_F(HostFactsTest, RealH200OnFirecracker) {
  HostFacts h = readHostFacts(kdktest::hostFixture("h200-580-fc"));
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
  std::string root = kdktest::hostFixture("a100-mig");
  ASSERT_EQ(std::system(("rm -r " + root + "/proc/driver/nvidia/capabilities/gpu0/mig/gi2").c_str()), 0);
  HostFacts h = readHostFacts(root);
  ASSERT_EQ(h.mig.size(), 2u);
  EXPECT_EQ(h.mig[0].gi, 1);
  EXPECT_EQ(h.mig[0].ci, -1);
  EXPECT_EQ(h.mig[0].minor, 12);
  EXPECT_EQ(h.mig[1].ci, 0);
  EXPECT_EQ(h.mig[1].minor, 13);
}

TEST_F(HostFactsTest, Driver470) {
  HostFacts h = readHostFacts(kdktest::hostFixture("driver-470"));
  ASSERT_TRUE(h.nvidia);
  EXPECT_EQ(h.maxCuda, "11.4");
  EXPECT_EQ(h.gpus[0].brand, "tesla");
}

TEST_F(HostFactsTest, MissingUvmIsAProblem) {
  HostFacts h = readHostFacts(kdktest::hostFixture("no-uvm"));
  ASSERT_TRUE(h.node("/dev/nvidia-uvm"));
  EXPECT_EQ(h.node("/dev/nvidia-uvm")->problem, "missing");
  EXPECT_EQ(h.node("/dev/nvidiactl")->problem, "");
  EXPECT_FALSE(h.devCharMissing.empty());
}

TEST_F(HostFactsTest, AmdMi300) {
  HostFacts h = readHostFacts(kdktest::hostFixture("mi300"));
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
  HostFacts h = readHostFacts(kdktest::hostFixture("cpu-only"));
  EXPECT_FALSE(h.nvidia);
  EXPECT_FALSE(h.amdDriver);
  EXPECT_NE(h.toText().find("CPU-only"), std::string::npos);
  HostFacts none = readHostFacts("/nonexistent-root");
  EXPECT_FALSE(none.nvidia);
}

TEST_F(HostFactsTest, WrongDeviceNumbersAreReported) {
  std::string root = kdktest::hostFixture("h100-550-open");
  ASSERT_EQ(std::system(("rm " + root + "/dev/nvidia1 && mknod " + root + "/dev/nvidia1 c 195 7").c_str()), 0);
  HostFacts h = readHostFacts(root);
  EXPECT_EQ(h.node("/dev/nvidia1")->problem, "is 195:7, expected 195:1");
}
