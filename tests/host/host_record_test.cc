#include "kernodeck/host/host_record.h"

#include <gtest/gtest.h>

#include "fixture.h"

namespace host_host_record_test {

using namespace kernodeck::host;
using nlohmann::json;

// What the hook writes is what the probe reads back: every fixture host survives the round trip
// through its record with the fields the probe uses.
TEST(HostRecord, TheHooksRecordOfEachFixtureHostParsesBack) {
  for (const char* name : {"h100-550-open", "driver-470", "a100-mig", "cpu-only", "mi300"}) {
    HostFacts live = kdktest::fixtureFacts(kdktest::fixtureDir(name));
    json record = {{"schema", "kernodeck.host/v1"}, {"host", live.toJson()}, {"decision", "allow"}};
    auto rec = parseHostRecord(record.dump());
    ASSERT_TRUE(rec.ok()) << name << ": " << rec.error().message;
    const HostFacts* back = &rec->host;
    EXPECT_EQ(back->root, live.root) << name;
    ASSERT_EQ(back->nvidia.has_value(), live.nvidia.has_value()) << name;
    if (live.nvidia) {
      EXPECT_EQ(back->nvidia->version, live.nvidia->version) << name;
      EXPECT_EQ(back->nvidia->openModule, live.nvidia->openModule) << name;
    }
    EXPECT_EQ(back->maxCuda, live.maxCuda) << name;
    ASSERT_EQ(back->gpus.size(), live.gpus.size()) << name;
    for (size_t i = 0; i < live.gpus.size(); ++i) {
      const NvidiaGpu &a = back->gpus[i], &b = live.gpus[i];
      EXPECT_EQ(std::tie(a.model, a.uuid, a.busLocation, a.minor, a.excluded, a.arch, a.brand),
                std::tie(b.model, b.uuid, b.busLocation, b.minor, b.excluded, b.arch, b.brand))
          << name << " GPU " << i;
    }
  }
}

TEST(HostRecord, AbsentFieldsKeepTheirDefaults) {
  auto rec = parseHostRecord(R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"driver_version": "470.199.02",
                                 "gpus": [{"model": "Tesla T4", "arch": "7.5", "brand": null}]}}})");
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  const HostFacts* h = &rec->host;
  ASSERT_TRUE(h->nvidia);
  EXPECT_EQ(h->nvidia->version, "470.199.02");
  EXPECT_EQ(h->maxCuda, "");
  ASSERT_EQ(h->gpus.size(), 1u);
  EXPECT_EQ(h->gpus[0].arch, "7.5");
  EXPECT_EQ(h->gpus[0].brand, "");
  EXPECT_EQ(h->gpus[0].minor, -1);
  auto none = parseHostRecord(R"({"schema": "kernodeck.host/v1", "host": {"nvidia": null}})");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->host.nvidia);
}

// A record that is not one, or a field of the wrong type: an error that names the field.
TEST(HostRecord, BadRecordsAreErrorsNamingTheField) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"not json", "is not a kernodeck.host/v1 record"},
      {"[1]", "is not a kernodeck.host/v1 record"},
      {R"({"schema": "kernodeck.expect/v1"})", "is not a kernodeck.host/v1 record"},
      {R"({"schema": "kernodeck.host/v1", "host": 3})",
       "is not a kernodeck.host/v1 record: host is a number, expected an object"},
      {R"({"schema": "kernodeck.host/v1", "host": {"root": 1}})",
       "is not a kernodeck.host/v1 record: host.root is a number, expected a string"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": "550"}})",
       "is not a kernodeck.host/v1 record: host.nvidia is a string, expected an object"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"driver_version": 550}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.driver_version is a number, expected a string"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": {}}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus is an object, expected an array"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": [{}, 7]}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus[1] is a number, expected an object"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": [{"arch": 9.0}]}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus[0].arch is a number, expected a string"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": [{"minor": "0"}]}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus[0].minor is a string, expected an integer"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": [{"minor": 1099511627776}]}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus[0].minor is 1099511627776, expected an integer from -1 to "
       "1048576"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": [{"excluded": 0}]}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus[0].excluded is a number, expected true or false"},
      {R"({"schema": "kernodeck.host/v1", "container": {"pid": "12"}})",
       "is not a kernodeck.host/v1 record: container.pid is a string, expected an integer"},
      {R"({"schema": "kernodeck.host/v1", "verdicts": [{"code": "a", "severity": "error", "message": "m", "path": 3}]})",
       "is not a kernodeck.host/v1 record: verdicts[0].path is a number, expected a string"},
      {R"({"schema": "kernodeck.host/v1", "expectation": {"schema": "kernodeck.expect/v1", "accelerator": "tpu"}})",
       "is not a kernodeck.host/v1 record: expectation: expectation field 'accelerator' is 'tpu', not cuda, rocm or "
       "cpu"},
  };
  for (const auto& c : cases) {
    auto h = parseHostRecord(c.text);
    ASSERT_FALSE(h.ok()) << c.text;
    EXPECT_EQ(h.error().message, c.message) << c.text;
  }
}

// HostRecord::toJson writes what parseHostRecord reads: for every fixture host, a record with
// every field set reads back into a record that writes the same JSON, and the typed facts are
// the host's (device nodes, MIG, AMD agents and problems included).
TEST(HostRecord, WhatTheRecordWritesReadsBackEqual) {
  for (const char* name : {"h100-550-open", "driver-470", "a100-mig", "cpu-only", "mi300"}) {
    HostRecord rec;
    rec.kernodeckVersion = "0.1.0";
    rec.time = "2026-12-01T14:00:00Z";
    rec.container = {"c1", "/run/bundle", 4242};
    rec.host = kdktest::fixtureFacts(kdktest::fixtureDir(name));
    rec.gpuContainer = true;
    rec.vendor = "nvidia";
    rec.requestedGpus = -1;
    rec.passedNodes = {"/dev/nvidia0", "/dev/nvidiactl"};
    kernodeck::gpu::Expectation e;
    e.accelerator = "cuda";
    e.torchVersion = "2.3.0+cu121";
    e.torchCuda = "12.1";
    e.torchArchList = {"sm_80"};
    e.nvidiaRequire = {"cuda>=12.1"};
    e.compatLibraries.push_back({"/usr/local/cuda/compat/libcuda.so.550.54.15", "550.54.15", {}});
    e.compatLibraries.back().note.cudaVersion = "12.4";
    e.compatLibraries.back().note.driverBranches = {535, 550};
    rec.expectation = e;
    rec.forwardCompat = json::array({{{"path", "/usr/local/cuda/compat/libcuda.so.1"}, {"applies", false}}});
    rec.verdicts = {{"hook.cuda.unsupported", "error", "too old", {{"path", "/dev/nvidia0"}}},
                    {"hook.cuda.forward_compat", "info", "applies", {}}};
    rec.policy = "enforce";
    rec.runs = 2;
    rec.logError = "cannot open the log /var/log/x";
    rec.decision = "block";
    json written = rec.toJson();
    auto back = parseHostRecordJson(written);
    ASSERT_TRUE(back.ok()) << name << ": " << back.error().message;
    EXPECT_EQ(back->toJson(), written) << name;
    EXPECT_EQ(back->doc, written) << name;
    if (rec.host.nvidia) {  // device nodes and MIG are written under "nvidia"
      EXPECT_EQ(back->host.nodes.size(), rec.host.nodes.size()) << name;
      EXPECT_EQ(back->host.mig.size(), rec.host.mig.size()) << name;
    }
    if (rec.host.amdDriver) {
      EXPECT_EQ(back->host.amdAgents.size(), rec.host.amdAgents.size()) << name;
    }
    EXPECT_EQ(back->host.amdDriver, rec.host.amdDriver) << name;
    EXPECT_EQ(back->container.pid, 4242);
    EXPECT_EQ(back->verdicts[0].evidence.at("path"), "/dev/nvidia0");
    ASSERT_TRUE(back->expectation);
    EXPECT_EQ(back->expectation->compatLibraries.at(0).note.driverBranches, (std::vector<int>{535, 550}));
    // Nothing set: the defaults read back as the defaults.
    HostRecord empty;
    auto none = parseHostRecordJson(empty.toJson());
    ASSERT_TRUE(none.ok()) << none.error().message;
    EXPECT_EQ(none->toJson(), empty.toJson());
  }
}

}  // namespace host_host_record_test
