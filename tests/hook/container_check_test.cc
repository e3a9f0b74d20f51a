#include "kernodeck/hook/container_check.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "../host/fixture.h"

using namespace kernodeck;
using namespace kernodeck::gpu;
using namespace kernodeck::hook;

namespace {

oci::LinuxDevice dev(const std::string& p, int64_t major, int64_t minor) { return {p, "c", major, minor}; }

std::vector<oci::LinuxDevice> nvDevs(int gpus, int uvmMajor = 508) {
  std::vector<oci::LinuxDevice> d = {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia-uvm", uvmMajor, 0)};
  for (int i = 0; i < gpus; ++i) d.push_back(dev("/dev/nvidia" + std::to_string(i), 195, i));
  return d;
}

std::vector<std::string> codes(const ContainerCheck& c) {
  std::vector<std::string> out;
  for (const auto& f : c.findings) out.push_back(f.code);
  std::sort(out.begin(), out.end());
  return out;
}

Expectation torchFor(const std::string& cuda) {
  Expectation e;
  e.accelerator = "cuda";
  e.torchVersion = "2.3.0+cu" + cuda;
  e.torchCuda = cuda;
  return e;
}

Expectation withArch(Expectation e, std::vector<std::string> archList) {
  e.torchArchList = std::move(archList);
  return e;
}

struct Case {
  const char* name;
  const char* host;
  std::map<std::string, std::string> env;
  std::vector<oci::LinuxDevice> devices;
  std::optional<Expectation> expect;
  std::vector<std::string> wantCodes;
  bool blocking;
};

}  // namespace

TEST(ContainerCheck, Table) {
  if (!kdktest::isRoot()) GTEST_SKIP() << "fake /dev trees need mknod (root)";
  std::vector<Case> cases = {
      {"h100 all gpus passed", "h100-550-open", {{"NVIDIA_VISIBLE_DEVICES", "all"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.1"}},
       nvDevs(2), torchFor("12.1"), {}, false},
      {"h100 asks two, gets one", "h100-550-open", {{"NVIDIA_VISIBLE_DEVICES", "0,1"}}, nvDevs(1), std::nullopt,
       {"hook.device.missing"}, true},
      {"uvm not passed", "h100-550-open", {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia0", 195, 0)}, std::nullopt, {"hook.device.missing"}, true},
      {"470 refuses cuda>=12.4", "driver-470", {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}},
       nvDevs(1, 509), std::nullopt, {"hook.require.unsatisfied"}, true},
      {"470 accepts the 470 branch term", "driver-470",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.1 brand=tesla,driver>=470,driver<471"}},
       nvDevs(1, 509), std::nullopt, {}, false},
      {"470 cannot run a cu121 torch", "driver-470", {{"NVIDIA_VISIBLE_DEVICES", "0"}}, nvDevs(1, 509), torchFor("12.1"),
       {"hook.cuda.unsupported"}, true},
      {"470 runs cu118 by minor compat", "driver-470", {{"NVIDIA_VISIBLE_DEVICES", "0"}}, nvDevs(1, 509), torchFor("11.8"),
       {"hook.cuda.compat"}, false},
      {"disable require", "driver-470",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}, {"NVIDIA_DISABLE_REQUIRE", "1"}},
       nvDevs(1, 509), std::nullopt, {"hook.require.disabled"}, false},
      {"legacy CUDA_VERSION", "driver-470", {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"CUDA_VERSION", "12.2.0"}}, nvDevs(1, 509),
       std::nullopt, {"hook.require.unsatisfied"}, true},
      {"host without nvidia-uvm", "no-uvm", {{"NVIDIA_VISIBLE_DEVICES", "all"}},
       {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia0", 195, 0)}, std::nullopt,
       {"hook.device.missing", "hook.host.node", "host.devchar.missing"}, true},
      {"no devices and no NVIDIA hook", "h100-550-open", {{"NVIDIA_VISIBLE_DEVICES", "all"}}, {}, std::nullopt,
       {"hook.device.missing"}, true},
      {"gpu container on cpu node", "cpu-only", {{"NVIDIA_VISIBLE_DEVICES", "all"}}, {}, std::nullopt,
       {"hook.driver.absent"}, true},
      {"cpu container on cpu node", "cpu-only", {{"PATH", "/bin"}}, {}, std::nullopt, {}, false},
      {"void means no gpu", "cpu-only", {{"NVIDIA_VISIBLE_DEVICES", "void"}}, {}, std::nullopt, {}, false},
      {"MIG without caps", "a100-mig", {{"NVIDIA_VISIBLE_DEVICES", "MIG-1234"}}, nvDevs(1), std::nullopt,
       {"hook.device.missing"}, true},
      {"MIG with caps", "a100-mig", {{"NVIDIA_VISIBLE_DEVICES", "0:1"}},
       [] { auto d = nvDevs(1); d.push_back(dev("/dev/nvidia-caps/nvidia-cap12", 511, 12)); return d; }(), std::nullopt, {},
       false},
      {"wrong minor passed", "h100-550-open", {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia-uvm", 508, 0), dev("/dev/nvidia0", 195, 5)}, std::nullopt,
       {"hook.device.mismatch"}, false},
      {"amd all passed", "mi300", {}, {dev("/dev/kfd", 236, 0), dev("/dev/dri/renderD128", 226, 128)}, std::nullopt, {}, false},
      {"amd without render node", "mi300", {}, {dev("/dev/kfd", 236, 0)}, std::nullopt, {"hook.device.missing"}, true},
      {"real h200 runs the cu130 torch it was read with", "h200-580-fc",
       {{"NVIDIA_VISIBLE_DEVICES", "all"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=13.0"}}, nvDevs(1, 238), torchFor("13.0"),
       {"host.devchar.missing"}, false},
      {"real h200 cannot run a cu990 torch", "h200-580-fc", {{"NVIDIA_VISIBLE_DEVICES", "0"}}, nvDevs(1, 238),
       torchFor("99.0"), {"hook.cuda.unsupported", "host.devchar.missing"}, true},
      {"real h200, torch built for sm_80 and sm_86 only", "h200-580-fc", {{"NVIDIA_VISIBLE_DEVICES", "0"}}, nvDevs(1, 238),
       withArch(torchFor("13.0"), {"sm_80", "sm_86"}), {"hook.arch.unsupported", "host.devchar.missing"}, true},
      {"real h200, torch with sm_80 PTX", "h200-580-fc", {{"NVIDIA_VISIBLE_DEVICES", "0"}}, nvDevs(1, 238),
       withArch(torchFor("13.0"), {"sm_80", "compute_80"}), {"host.devchar.missing"}, false},
      {"amd image on nvidia node", "h100-550-open", {}, {dev("/dev/kfd", 236, 0)}, std::nullopt, {"hook.driver.absent"}, true},
  };
  for (const auto& c : cases) {
    std::string root = kdktest::hostFixture(c.host);
    ASSERT_FALSE(root.empty()) << c.name;
    host::HostFacts h = host::readHostFacts(root);
    oci::ContainerSpec spec;
    spec.env = c.env;
    spec.devices = c.devices;
    spec.additionalGids = {44, 105};
    auto groups = parseGroupFile("video:x:44:\nrender:x:105:\n");
    ContainerCheck r = checkContainer(h, spec, c.expect, groups);
    std::vector<std::string> want = c.wantCodes;
    std::sort(want.begin(), want.end());
    auto got = codes(r);
    got.erase(std::unique(got.begin(), got.end()), got.end());
    EXPECT_EQ(got, want) << c.name;
    EXPECT_EQ(r.blocking(), c.blocking) << c.name;
  }
}

TEST(ContainerCheck, AmdGroups) {
  if (!kdktest::isRoot()) GTEST_SKIP() << "fake /dev trees need mknod (root)";
  host::HostFacts h = host::readHostFacts(kdktest::hostFixture("mi300"));
  oci::ContainerSpec spec;
  spec.devices = {dev("/dev/kfd", 236, 0), dev("/dev/dri/renderD128", 226, 128)};
  auto r = checkContainer(h, spec, std::nullopt, parseGroupFile("video:x:44:\nrender:x:105:\n"));
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].code, "hook.amd.groups");
  EXPECT_NE(r.findings[0].message.find("render (105)"), std::string::npos);
}
