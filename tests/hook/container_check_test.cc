#include "kernodeck/hook/container_check.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "../host/fixture.h"

namespace hook_container_check_test {

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
  std::vector<Case> cases = {
      {"h100 all gpus passed",
       "h100-550-open",
       {{"NVIDIA_VISIBLE_DEVICES", "all"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.1"}},
       nvDevs(2),
       torchFor("12.1"),
       {},
       false},
      {"h100 asks two, gets one",
       "h100-550-open",
       {{"NVIDIA_VISIBLE_DEVICES", "0,1"}},
       nvDevs(1),
       std::nullopt,
       {"hook.device.missing"},
       true},
      {"uvm not passed",
       "h100-550-open",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia0", 195, 0)},
       std::nullopt,
       {"hook.device.missing"},
       true},
      {"470 refuses cuda>=12.4",
       "driver-470",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}},
       nvDevs(1, 509),
       std::nullopt,
       {"hook.require.unsatisfied"},
       true},
      {"470 accepts the 470 branch term",
       "driver-470",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.1 brand=tesla,driver>=470,driver<471"}},
       nvDevs(1, 509),
       std::nullopt,
       {},
       false},
      {"470 cannot run a cu121 torch",
       "driver-470",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       nvDevs(1, 509),
       torchFor("12.1"),
       {"hook.cuda.unsupported"},
       true},
      {"470 runs cu118 by minor compat",
       "driver-470",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       nvDevs(1, 509),
       torchFor("11.8"),
       {"hook.cuda.compat"},
       false},
      {"disable require",
       "driver-470",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}, {"NVIDIA_DISABLE_REQUIRE", "1"}},
       nvDevs(1, 509),
       std::nullopt,
       {"hook.require.disabled"},
       false},
      {"legacy CUDA_VERSION",
       "driver-470",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"CUDA_VERSION", "12.2.0"}},
       nvDevs(1, 509),
       std::nullopt,
       {"hook.require.unsatisfied"},
       true},
      {"host without nvidia-uvm",
       "no-uvm",
       {{"NVIDIA_VISIBLE_DEVICES", "all"}},
       {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia0", 195, 0)},
       std::nullopt,
       {"hook.device.missing", "hook.host.node", "host.devchar.missing"},
       true},
      {"no devices and no NVIDIA hook",
       "h100-550-open",
       {{"NVIDIA_VISIBLE_DEVICES", "all"}},
       {},
       std::nullopt,
       {"hook.device.missing"},
       true},
      {"gpu container on cpu node",
       "cpu-only",
       {{"NVIDIA_VISIBLE_DEVICES", "all"}},
       {},
       std::nullopt,
       {"hook.driver.absent"},
       true},
      {"cpu container on cpu node", "cpu-only", {{"PATH", "/bin"}}, {}, std::nullopt, {}, false},
      {"void means no gpu", "cpu-only", {{"NVIDIA_VISIBLE_DEVICES", "void"}}, {}, std::nullopt, {}, false},
      {"MIG without caps",
       "a100-mig",
       {{"NVIDIA_VISIBLE_DEVICES", "MIG-1234"}},
       nvDevs(1),
       std::nullopt,
       {"hook.device.missing"},
       true},
      // a100-mig: gpu0/gi1 access is nvidia-cap12, its ci0 nvidia-cap13.
      {"MIG with caps",
       "a100-mig",
       {{"NVIDIA_VISIBLE_DEVICES", "0:1"}},
       [] {
         auto d = nvDevs(1);
         d.push_back(dev("/dev/nvidia-caps/nvidia-cap12", 511, 12));
         d.push_back(dev("/dev/nvidia-caps/nvidia-cap13", 511, 13));
         return d;
       }(),
       std::nullopt,
       {},
       false},
      {"MIG GPU instance without its compute instance's cap",
       "a100-mig",
       {{"NVIDIA_VISIBLE_DEVICES", "0:1"}},
       [] {
         auto d = nvDevs(1);
         d.push_back(dev("/dev/nvidia-caps/nvidia-cap12", 511, 12));
         return d;
       }(),
       std::nullopt,
       {"hook.device.missing"},
       true},
      {"MIG compute instance without its GPU instance's cap or GPU",
       "a100-mig",
       {{"NVIDIA_VISIBLE_DEVICES", "MIG-1234"}},
       {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia-uvm", 508, 0), dev("/dev/nvidia-caps/nvidia-cap13", 511, 13)},
       std::nullopt,
       {"hook.device.missing"},  // /dev/nvidia0 and nvidia-cap12 (DeviceFindingsNameTheNode checks the names)
       true},
      {"MIG cap the host does not have",
       "a100-mig",
       {{"NVIDIA_VISIBLE_DEVICES", "0:1"}},
       [] {
         auto d = nvDevs(1);
         d.push_back(dev("/dev/nvidia-caps/nvidia-cap99", 511, 99));
         return d;
       }(),
       std::nullopt,
       {"hook.device.unknown"},
       true},
      {"IMEX channel passed",
       "h100-imex",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_IMEX_CHANNELS", "0"}},
       [] {
         auto d = nvDevs(1);
         d.push_back(dev("/dev/nvidia-caps-imex-channels/channel0", 509, 0));
         return d;
       }(),
       std::nullopt,
       {},
       false},
      {"IMEX channel not passed",
       "h100-imex",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_IMEX_CHANNELS", "all"}},
       nvDevs(1),
       std::nullopt,
       {"hook.device.missing"},
       true},
      {"IMEX channel the host lacks",
       "h100-imex",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_IMEX_CHANNELS", "0,1"}},
       [] {
         auto d = nvDevs(1);
         d.push_back(dev("/dev/nvidia-caps-imex-channels/channel0", 509, 0));
         return d;
       }(),
       std::nullopt,
       {"hook.imex.channel_missing"},
       true},
      {"IMEX on a host without channels",
       "h100-550-open",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_IMEX_CHANNELS", "all"}},
       nvDevs(1),
       std::nullopt,
       {"hook.imex.channel_missing"},
       true},
      {"IMEX not asked for",
       "h100-550-open",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_IMEX_CHANNELS", "none"}},
       nvDevs(1),
       std::nullopt,
       {},
       false},
      {"wrong minor passed",
       "h100-550-open",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia-uvm", 508, 0), dev("/dev/nvidia0", 195, 5)},
       std::nullopt,
       {"hook.device.mismatch"},
       false},
      {"amd all passed",
       "mi300",
       {},
       {dev("/dev/kfd", 236, 0), dev("/dev/dri/renderD128", 226, 128)},
       std::nullopt,
       {},
       false},
      {"amd without render node", "mi300", {}, {dev("/dev/kfd", 236, 0)}, std::nullopt, {"hook.device.missing"}, true},
      {"real h200 runs the cu130 torch it was read with",
       "h200-580-fc",
       {{"NVIDIA_VISIBLE_DEVICES", "all"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=13.0"}},
       nvDevs(1, 238),
       torchFor("13.0"),
       {"host.devchar.missing"},
       false},
      {"real h200 cannot run a cu990 torch",
       "h200-580-fc",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       nvDevs(1, 238),
       torchFor("99.0"),
       {"hook.cuda.unsupported", "host.devchar.missing"},
       true},
      {"real h200, torch built for sm_80 and sm_86 only",
       "h200-580-fc",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       nvDevs(1, 238),
       withArch(torchFor("13.0"), {"sm_80", "sm_86"}),
       {"hook.arch.unsupported", "host.devchar.missing"},
       true},
      {"real h200, torch with sm_80 PTX",
       "h200-580-fc",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       nvDevs(1, 238),
       withArch(torchFor("13.0"), {"sm_80", "compute_80"}),
       {"host.devchar.missing"},
       false},
      {"amd image on nvidia node",
       "h100-550-open",
       {},
       {dev("/dev/kfd", 236, 0)},
       std::nullopt,
       {"hook.driver.absent"},
       true},
      // arm64 Grace nodes (the open module for aarch64; GPUs in PCI domains 0008, 0009, ...).
      {"gh200 550, torch cu124 sm_90",
       "gh200-550-open",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}},
       nvDevs(1, 507),
       withArch(torchFor("12.4"), {"sm_90"}),
       {},
       false},
      {"gh200 550 refuses cuda>=12.8",
       "gh200-550-open",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.8"}},
       nvDevs(1, 507),
       std::nullopt,
       {"hook.require.unsatisfied"},
       true},
      {"gh200 570, torch cu128 sm_90",
       "gh200-570-open",
       {{"NVIDIA_VISIBLE_DEVICES", "all"}},
       nvDevs(1, 509),
       withArch(torchFor("12.8"), {"sm_90"}),
       {},
       false},
      {"gb200, torch without sm_100",
       "gb200-570-open",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       nvDevs(1, 510),
       withArch(torchFor("12.8"), {"sm_80", "sm_90"}),
       {"hook.arch.unsupported"},
       true},
      {"gb200, torch cu128 sm_100",
       "gb200-570-open",
       {{"NVIDIA_VISIBLE_DEVICES", "all"}},
       nvDevs(4, 510),
       withArch(torchFor("12.8"), {"sm_90", "sm_100"}),
       {},
       false},
      {"jetson: another stack, no verdict",
       "jetson-orin-l4t",
       {{"NVIDIA_VISIBLE_DEVICES", "all"}},
       {dev("/dev/nvhost-ctrl", 489, 0)},
       torchFor("12.6"),
       {"hook.host.jetson"},
       false},
  };
  for (const auto& c : cases) {
    host::HostFacts h = kdktest::fixtureFacts(kdktest::fixtureDir(c.host));
    ASSERT_FALSE(h.root.empty()) << c.name;
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
  host::HostFacts h = kdktest::fixtureFacts(kdktest::fixtureDir("mi300"));
  oci::ContainerSpec spec;
  spec.devices = {dev("/dev/kfd", 236, 0), dev("/dev/dri/renderD128", 226, 128)};
  auto r = checkContainer(h, spec, std::nullopt, parseGroupFile("video:x:44:\nrender:x:105:\n"));
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].code, "hook.amd.groups");
  EXPECT_NE(r.findings[0].message.find("render (105)"), std::string::npos);
}

namespace {

// Two different GPUs on one node, in memory (no device nodes needed): GPU 0 an H100 (9.0),
// GPU 1 a T4 (7.5, brand tesla).
host::HostFacts twoGpuHost() {
  host::HostFacts h;
  h.root = "/";
  h.nvidia = host::NvidiaDriver{"550.54.15", true};
  h.maxCuda = "12.4";
  h.gpus = {{"NVIDIA H100 80GB HBM3", "GPU-aaaa", "0000:18:00.0", "PCIe", 0, false, "9.0", "nvidia"},
            {"Tesla T4", "GPU-bbbb", "0000:3b:00.0", "PCIe", 1, false, "7.5", "tesla"}};
  h.nodes = {{"/dev/nvidiactl", 195, 255, true, ""},
             {"/dev/nvidia-uvm", 508, 0, true, ""},
             {"/dev/nvidia0", 195, 0, true, ""},
             {"/dev/nvidia1", 195, 1, true, ""}};
  return h;
}

oci::ContainerSpec specOf(std::map<std::string, std::string> env, std::vector<oci::LinuxDevice> devices) {
  oci::ContainerSpec s;
  s.env = std::move(env);
  s.devices = std::move(devices);
  return s;
}

const report::Finding* find(const ContainerCheck& c, const std::string& code) {
  for (const auto& f : c.findings)
    if (f.code == code) return &f;
  return nullptr;
}

}  // namespace

// Requirements hold per visible GPU, as libnvidia-container checks them: the GPU passed (or
// named by NVIDIA_VISIBLE_DEVICES, a MIG device by its parent), not every GPU of the node.
TEST(ContainerCheck, RequirementsArePerVisibleGpu) {
  struct Case {
    const char* name;
    std::map<std::string, std::string> env;
    std::vector<oci::LinuxDevice> devices;
    const char* want;  // the requirement finding, or "" for none
  };
  auto only = [](int gpu) {
    return std::vector<oci::LinuxDevice>{dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia-uvm", 508, 0),
                                         dev("/dev/nvidia" + std::to_string(gpu), 195, gpu)};
  };
  std::vector<Case> cases = {
      {"arch>=8.0 on the H100", {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}}, only(0), ""},
      {"arch>=8.0 on the T4",
       {{"NVIDIA_VISIBLE_DEVICES", "1"}, {"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}},
       only(1),
       "hook.require.unsatisfied"},
      {"by index, injected", {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}}, {}, ""},
      {"by uuid, injected",
       {{"NVIDIA_VISIBLE_DEVICES", "GPU-bbbb"}, {"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}},
       {},
       "hook.require.unsatisfied"},
      {"MIG by its parent",
       {{"NVIDIA_VISIBLE_DEVICES", "1:0"}, {"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}},
       {},
       "hook.require.unsatisfied"},
      {"all: the T4 fails",
       {{"NVIDIA_VISIBLE_DEVICES", "all"}, {"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}},
       {},
       "hook.require.unsatisfied"},
      {"MIG-UUID: no device info",
       {{"NVIDIA_VISIBLE_DEVICES", "MIG-1234"}, {"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}},
       {},
       "hook.require.undecidable"},
      {"no device info, cuda still checked",
       {{"NVIDIA_VISIBLE_DEVICES", "MIG-1234"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.6"}},
       {},
       "hook.require.unsatisfied"},
  };
  host::HostFacts h = twoGpuHost();
  for (const auto& c : cases) {
    oci::ContainerSpec s = specOf(c.env, c.devices);
    s.hookPaths = {"/usr/bin/nvidia-container-runtime-hook"};  // devices injected when the spec has none
    ContainerCheck check = checkContainer(h, s, std::nullopt);
    bool any = find(check, "hook.require.unsatisfied") || find(check, "hook.require.undecidable");
    if (!*c.want)
      EXPECT_FALSE(any) << c.name;
    else
      EXPECT_NE(find(check, c.want), nullptr) << c.name;
  }
}

// What a message says matches what is wrong.
TEST(ContainerCheck, MessagesNameTheCauseAndTheFix) {
  host::HostFacts h = twoGpuHost();
  auto msg = [&](std::map<std::string, std::string> env, std::vector<oci::LinuxDevice> devices,
                 std::optional<Expectation> e, const std::string& code) {
    ContainerCheck c = checkContainer(h, specOf(std::move(env), std::move(devices)), e);
    const report::Finding* f = find(c, code);
    return f ? f->message : std::string("(no " + code + ")");
  };
  // brand= is not fixed by a driver update.
  std::string brand = msg({{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_BRAND", "brand=tesla"}}, nvDevs(1),
                          std::nullopt, "hook.require.unsatisfied");
  EXPECT_NE(brand.find("NVIDIA_REQUIRE_BRAND 'brand=tesla'"), std::string::npos) << brand;
  EXPECT_NE(brand.find("run it on a GPU that meets it (this one is arch 9.0, brand nvidia)"), std::string::npos)
      << brand;
  EXPECT_EQ(brand.find("update the driver"), std::string::npos) << brand;
  std::string cuda = msg({{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.6"}}, nvDevs(1),
                         std::nullopt, "hook.require.unsatisfied");
  EXPECT_NE(cuda.find("update the driver"), std::string::npos) << cuda;
  // The expectation's requirements are named after it.
  Expectation e = torchFor("12.1");
  e.nvidiaRequire = {"cuda>=12.1", "cuda>>1"};
  std::string invalid = msg({{"NVIDIA_VISIBLE_DEVICES", "0"}}, nvDevs(1), e, "hook.require.invalid");
  EXPECT_NE(invalid.find("the expectation's nvidia.require[1]"), std::string::npos) << invalid;
  EXPECT_EQ(invalid.find("KERNODECK_EXPECT"), std::string::npos) << invalid;
  // A cuda image without NVIDIA_VISIBLE_DEVICES: the expectation is the reason, not the variable.
  std::string noGpu = msg({}, {}, torchFor("12.1"), "hook.device.missing");
  EXPECT_NE(noGpu.find("the image's expectation says it needs CUDA, NVIDIA_VISIBLE_DEVICES is not set"),
            std::string::npos)
      << noGpu;
  EXPECT_EQ(noGpu.find("NVIDIA_VISIBLE_DEVICES asks"), std::string::npos) << noGpu;
}

// A legacy CUDA image (CUDA_VERSION only) gets every GPU from the toolkit and cuda>=its version.
TEST(ContainerCheck, LegacyCudaImageAsTheToolkit) {
  host::HostFacts h = twoGpuHost();
  ContainerCheck c = checkContainer(h, specOf({{"CUDA_VERSION", "12.6.0"}}, nvDevs(2)), std::nullopt);
  EXPECT_TRUE(c.gpuContainer);
  EXPECT_EQ(c.requestedGpus, -1);
  const report::Finding* f = find(c, "hook.require.unsatisfied");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("CUDA_VERSION 'cuda>=12.6'"), std::string::npos) << f->message;
  ContainerCheck none = checkContainer(h, specOf({{"CUDA_VERSION", "12.6.0"}}, {}), std::nullopt);
  const report::Finding* missing = find(none, "hook.device.missing");
  ASSERT_NE(missing, nullptr);
  EXPECT_NE(missing->message.find("legacy CUDA image"), std::string::npos) << missing->message;
  ContainerCheck misspelt = checkContainer(
      h,
      specOf({{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_DISABLE_REQUIRES", "1"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.6"}},
             nvDevs(1)),
      std::nullopt);
  EXPECT_NE(find(misspelt, "hook.require.disable_ignored"), nullptr);
  EXPECT_NE(find(misspelt, "hook.require.unsatisfied"), nullptr);  // still checked, as the toolkit does
}

// Each device finding names the node it is about (issue 29 §2): the MIG capability, the IMEX
// channel, nvidia-uvm.
TEST(ContainerCheck, DeviceFindingsNameTheNode) {
  struct Case {
    const char* host;
    std::map<std::string, std::string> env;
    std::vector<oci::LinuxDevice> devices;
    std::string node;
  } cases[] = {
      {"a100-mig",
       {{"NVIDIA_VISIBLE_DEVICES", "0:1"}},
       {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia-uvm", 508, 0), dev("/dev/nvidia0", 195, 0),
        dev("/dev/nvidia-caps/nvidia-cap12", 511, 12)},
       "/dev/nvidia-caps/nvidia-cap13"},
      {"a100-mig",
       {{"NVIDIA_VISIBLE_DEVICES", "0:1"}},
       {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia-uvm", 508, 0), dev("/dev/nvidia0", 195, 0),
        dev("/dev/nvidia-caps/nvidia-cap13", 511, 13)},
       "/dev/nvidia-caps/nvidia-cap12"},
      {"h100-imex",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_IMEX_CHANNELS", "0"}},
       nvDevs(1),
       "/dev/nvidia-caps-imex-channels/channel0"},
      {"h100-imex",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}, {"NVIDIA_IMEX_CHANNELS", "3"}},
       nvDevs(1),
       "/dev/nvidia-caps-imex-channels/channel3"},
      {"h100-550-open",
       {{"NVIDIA_VISIBLE_DEVICES", "0"}},
       {dev("/dev/nvidiactl", 195, 255), dev("/dev/nvidia0", 195, 0)},
       "/dev/nvidia-uvm"},
  };
  for (const auto& c : cases) {
    auto host = kdktest::fixtureFacts(kdktest::fixtureDir(c.host));
    oci::ContainerSpec spec;
    spec.env = c.env;
    spec.devices = c.devices;
    ContainerCheck r = checkContainer(host, spec, std::nullopt);
    bool named = std::any_of(r.findings.begin(), r.findings.end(), [&](const report::Finding& f) {
      auto it = f.evidence.find("path");
      return f.severity == report::Severity::Error && it != f.evidence.end() && it->second == c.node &&
             f.message.find(c.node) != std::string::npos;
    });
    EXPECT_TRUE(named) << c.host << ": no error finding names " << c.node;
  }
}

}  // namespace hook_container_check_test
