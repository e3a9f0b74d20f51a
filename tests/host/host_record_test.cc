#include "kernodeck/host/host_record.h"

#include <gtest/gtest.h>

#include "fixture.h"

using namespace kernodeck::host;
using nlohmann::json;

// What the hook writes is what the probe reads back: every fixture host survives the round trip
// through its record with the fields the probe uses.
TEST(HostRecord, TheHooksRecordOfEachFixtureHostParsesBack) {
  for (const char* name : {"h100-550-open", "driver-470", "a100-mig", "cpu-only", "mi300"}) {
    HostFacts live = kdktest::fixtureFacts(kdktest::fixtureDir(name));
    json record = {{"schema", "kernodeck.host/v1"}, {"host", live.toJson()}, {"decision", "allow"}};
    auto back = parseHostRecord(record.dump());
    ASSERT_TRUE(back.ok()) << name << ": " << back.error().message;
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
  auto h = parseHostRecord(R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"driver_version": "470.199.02",
                                 "gpus": [{"model": "Tesla T4", "arch": "7.5", "brand": null}]}}})");
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_TRUE(h->nvidia);
  EXPECT_EQ(h->nvidia->version, "470.199.02");
  EXPECT_EQ(h->maxCuda, "");
  ASSERT_EQ(h->gpus.size(), 1u);
  EXPECT_EQ(h->gpus[0].arch, "7.5");
  EXPECT_EQ(h->gpus[0].brand, "");
  EXPECT_EQ(h->gpus[0].minor, -1);
  auto none = parseHostRecord(R"({"schema": "kernodeck.host/v1", "host": {"nvidia": null}})");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->nvidia);
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
      {R"({"schema": "kernodeck.host/v1", "host": 3})", "is not a kernodeck.host/v1 record: host is not an object"},
      {R"({"schema": "kernodeck.host/v1", "host": {"root": 1}})",
       "is not a kernodeck.host/v1 record: host.root is not a string"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": "550"}})",
       "is not a kernodeck.host/v1 record: host.nvidia is not an object or null"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"driver_version": 550}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.driver_version is not a string"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": {}}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus is not an array"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": [{}, 7]}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus[1] is not an object"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": [{"arch": 9.0}]}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus[0].arch is not a string"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": [{"minor": "0"}]}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus[0].minor is not an integer from -1 to 1048576"},
      {R"({"schema": "kernodeck.host/v1", "host": {"nvidia": {"gpus": [{"excluded": 0}]}}})",
       "is not a kernodeck.host/v1 record: host.nvidia.gpus[0].excluded is not true or false"},
  };
  for (const auto& c : cases) {
    auto h = parseHostRecord(c.text);
    ASSERT_FALSE(h.ok()) << c.text;
    EXPECT_EQ(h.error().message, c.message) << c.text;
  }
}
