// The probe's device step on fixture trees: the container's /dev is read and its nodes opened
// through a fixture HostFs (nodes from dev.list, "denied" ones answering EPERM as a device
// cgroup does), so these run without root and without mknod.
#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>

#include "../host/fixture.h"
#include "kernodeck/probe/probe.h"

namespace probe_probe_devices_test {

using namespace kernodeck;
using nlohmann::json;

namespace {

struct Outcome {
  report::StepStatus devices = report::StepStatus::NotReached;
  std::string firstError;
  json section;  // the report's "devices"
  int denied = 0;
  std::string driver;  // reconcile's host_driver, when reached
};

// Runs the probe with the fixture tree `dir` as both the host and the container's /dev.
Outcome probeOn(const std::string& dir, const std::string& expect) {
  auto fs = host::fixtureHostFs(dir);
  EXPECT_TRUE(fs.ok()) << dir;
  if (!fs.ok()) return {};
  probe::ProbeOptions o;
  o.expect = expect;
  o.hostRecord = "/nonexistent";
  o.root = dir;  // no expectation and no Python there: nothing of this machine's own is inventoried
  o.hostFs = fs->get();
  o.devFs = fs->get();
  report::Report r = probe::runProbe(o);
  Outcome out;
  for (const auto& s : r.steps())
    if (s.name == "devices") out.devices = s.status;
  out.firstError = r.firstError();
  for (const auto& f : r.findings()) out.denied += f.code == "probe.device.denied";
  json j = r.toJson();
  out.section = j["devices"];
  if (j.contains("reconcile")) out.driver = j["reconcile"].value("host_driver", "");
  return out;
}

// The problems the step noted, "path: problem" (problem "ok" when none).
std::vector<std::string> nodeProblems(const json& devices) {
  std::vector<std::string> out;
  for (const auto& n : devices["nodes"])
    out.push_back(n["path"].get<std::string>() + ": " +
                  (n["problem"].is_null() ? "ok" : n["problem"].get<std::string>()));
  return out;
}

std::string withDeniedNode(const std::string& fixture, const std::string& node) {
  std::string dir = kdktest::fixtureCopy(fixture);
  std::string list = kdktest::readText(dir + "/dev.list");
  size_t at = list.find(" " + node + "\n");
  EXPECT_NE(at, std::string::npos) << node;
  if (at != std::string::npos) list.insert(at + 1 + node.size(), " denied");
  std::ofstream(dir + "/dev.list", std::ios::trunc) << list;
  return dir;
}

const std::string kDenied =
    "cannot be opened: Operation not permitted (the container's device cgroup denies it: the \"Failed to initialize "
    "NVML: "
    "Unknown Error\" case)";

}  // namespace

TEST(ProbeDevices, VisibleNvidiaNodesAreCheckedEvenWhenTheCpuIsExpected) {
  Outcome o = probeOn(kdktest::fixtureDir("h100-550-open"), "cpu");
  EXPECT_EQ(o.devices, report::StepStatus::Passed) << o.firstError;
  EXPECT_EQ(o.section["visible_gpu_nodes"], json({"/dev/nvidia0", "/dev/nvidia1"}));
  EXPECT_EQ(nodeProblems(o.section), (std::vector<std::string>{"/dev/nvidiactl: ok", "/dev/nvidia-uvm: ok",
                                                               "/dev/nvidia0: ok", "/dev/nvidia1: ok"}));
  EXPECT_EQ(o.denied, 0);
  EXPECT_EQ(o.driver, "550.54.15");  // no host record: the host's facts read through the fixture
}

TEST(ProbeDevices, ANodeTheCgroupDeniesIsAFindingAndFailsAnExpectedCuda) {
  std::string dir = withDeniedNode("h100-550-open", "dev/nvidia0");
  Outcome cpu = probeOn(dir, "cpu");
  EXPECT_EQ(cpu.devices, report::StepStatus::Passed);
  EXPECT_EQ(cpu.denied, 1);
  EXPECT_EQ(nodeProblems(cpu.section)[2], "/dev/nvidia0: " + kDenied);
  Outcome cuda = probeOn(dir, "cuda");
  EXPECT_EQ(cuda.devices, report::StepStatus::Failed);
  EXPECT_EQ(cuda.denied, 1);
  EXPECT_NE(cuda.firstError.find("/dev/nvidia0 " + kDenied), std::string::npos) << cuda.firstError;
  EXPECT_NE(cuda.firstError.find("never falls back to the CPU"), std::string::npos) << cuda.firstError;
}

TEST(ProbeDevices, MissingNodesFailAnExpectedAccelerator) {
  struct Case {
    const char* fixture;
    const char* expect;
    const char* firstProblem;
  };
  for (const Case& c :
       {Case{"no-uvm", "cuda", "/dev/nvidia-uvm missing"}, Case{"cpu-only", "cuda", "/dev/nvidiactl missing"},
        Case{"h100-550-open", "rocm", "/dev/kfd missing"}}) {
    Outcome o = probeOn(kdktest::fixtureDir(c.fixture), c.expect);
    EXPECT_EQ(o.devices, report::StepStatus::Failed) << c.fixture;
    EXPECT_NE(o.firstError.find(std::string("reachable: ") + c.firstProblem), std::string::npos)
        << c.fixture << ": " << o.firstError;
  }
}

TEST(ProbeDevices, RocmNeedsKfdAndARenderNode) {
  Outcome ok = probeOn(kdktest::fixtureDir("mi300"), "rocm");
  EXPECT_EQ(ok.devices, report::StepStatus::Passed) << ok.firstError;
  EXPECT_EQ(nodeProblems(ok.section), (std::vector<std::string>{"/dev/kfd: ok", "/dev/dri/renderD128: ok"}));
  Outcome denied = probeOn(withDeniedNode("mi300", "dev/dri/renderD128"), "rocm");
  EXPECT_EQ(denied.devices, report::StepStatus::Failed);
  EXPECT_EQ(denied.denied, 1);
}

namespace {

// The probe's findings that name `node` (code probe.device.missing), under the environment `env`.
int missingFindingsNaming(const std::string& dir, const std::map<std::string, std::string>& env,
                          const std::string& node) {
  for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
  auto fs = host::fixtureHostFs(dir);
  EXPECT_TRUE(fs.ok()) << dir;
  int n = 0;
  if (fs.ok()) {
    probe::ProbeOptions o;
    o.expect = "cuda";
    o.hostRecord = "/nonexistent";
    o.root = dir;
    o.hostFs = fs->get();
    o.devFs = fs->get();
    report::Report r = probe::runProbe(o);
    for (const auto& f : r.findings())
      if (f.code == "probe.device.missing" && f.evidence.count("path") && f.evidence.at("path") == node &&
          f.message.find(node) != std::string::npos)
        ++n;
  }
  for (const auto& [k, v] : env) ::unsetenv(k.c_str());
  return n;
}

}  // namespace

// Issue 29 §2: the nodes NVIDIA's validator misses, each a finding naming the node.
TEST(ProbeDevices, NodesTheValidatorMissesAreFindingsNamingThem) {
  std::string imex = kdktest::fixtureDir("h100-imex");
  EXPECT_EQ(missingFindingsNaming(imex, {{"NVIDIA_IMEX_CHANNELS", "0"}}, "/dev/nvidia-caps-imex-channels/channel0"), 0);
  EXPECT_EQ(missingFindingsNaming(imex, {{"NVIDIA_IMEX_CHANNELS", "0,1"}}, "/dev/nvidia-caps-imex-channels/channel1"),
            1);
  EXPECT_EQ(missingFindingsNaming(kdktest::fixtureDir("h100-550-open"), {{"NVIDIA_IMEX_CHANNELS", "all"}},
                                  "/dev/nvidia-caps-imex-channels"),
            1);
  EXPECT_EQ(missingFindingsNaming(kdktest::fixtureDir("h100-550-open"), {{"NVIDIA_VISIBLE_DEVICES", "0:1"}},
                                  "/dev/nvidia-caps"),
            1);
  EXPECT_EQ(
      missingFindingsNaming(kdktest::fixtureDir("a100-mig"), {{"NVIDIA_VISIBLE_DEVICES", "0:1"}}, "/dev/nvidia-caps"),
      0);
  EXPECT_EQ(missingFindingsNaming(kdktest::fixtureDir("no-uvm"), {}, "/dev/nvidia-uvm"), 1);
}

}  // namespace probe_probe_devices_test
