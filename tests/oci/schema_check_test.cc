#include "kernodeck/oci/schema_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "kernodeck/util/hash.h"

namespace oci_schema_check_test {

using namespace kernodeck::oci;
using nlohmann::json;

namespace {

const std::string kD = "sha256:" + kernodeck::util::sha256Hex("{}");

json manifest() {
  return {{"schemaVersion", 2},
          {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
          {"config", {{"mediaType", "application/vnd.oci.image.config.v1+json"}, {"digest", kD}, {"size", 2}}},
          {"layers", {{{"mediaType", "application/vnd.oci.image.layer.v1.tar+gzip"}, {"digest", kD}, {"size", 2}}}}};
}

json config() {
  return {{"architecture", "amd64"},
          {"os", "linux"},
          {"config", {{"Env", {"PATH=/bin"}}, {"User", "0"}}},
          {"rootfs", {{"type", "layers"}, {"diff_ids", {kD}}}}};
}

std::vector<std::string> fields(const std::vector<SchemaIssue>& issues) {
  std::vector<std::string> out;
  for (const auto& i : issues) out.push_back(i.field);
  return out;
}

}  // namespace

TEST(SchemaCheck, ValidDocumentsPass) {
  EXPECT_TRUE(checkManifestSchema(manifest(), "application/vnd.oci.image.manifest.v1+json").empty());
  EXPECT_TRUE(checkConfigSchema(config()).empty());
  json m = manifest();
  m["config"]["data"] = "e30=";  // "{}", as the digest and size say
  m["subject"] = m["config"];
  m["layers"][0]["urls"] = {"https://example.com/layer"};
  EXPECT_TRUE(checkManifestSchema(m).empty()) << checkManifestSchema(m)[0].field;
}

TEST(SchemaCheck, ManifestViolationsNameTheField) {
  struct Case {
    std::function<void(json&)> mutate;
    std::string field;
    std::string declared = "";
  };
  std::vector<Case> cases = {
      {[](json& m) { m["subject"] = "sha256:abc"; }, "subject"},
      {[](json& m) { m["layers"][0]["urls"] = {"not a url"}; }, "layers[0].urls[0]"},
      {[](json& m) { m["layers"][0]["urls"] = {5}; }, "layers[0].urls[0]"},
      {[](json& m) { m["artifactType"] = "no-slash"; }, "artifactType"},
      {[](json& m) { m["config"]["data"] = "%%%"; }, "config.data"},
      {[](json& m) { m["config"]["data"] = "e30"; }, "config.data"},   // unpadded: not strict base64
      {[](json& m) { m["config"]["data"] = "e3x9"; }, "config.data"},  // base64 of other bytes
      {[](json& m) { m["config"]["size"] = -1; }, "config.size"},
      {[](json& m) {  // an artifact of no layer (an image of none is valid: below)
         m["config"]["mediaType"] = "application/vnd.oci.empty.v1+json";
         m["layers"] = json::array();
       },
       "layers"},
      {[](json& m) { m["schemaVersion"] = 1; }, "schemaVersion"},
      {[](json& m) {
         m["annotations"] = {{"a", 1}};
       },
       "annotations[\"a\"]"},
      {[](json& m) { m.erase("config"); }, "config"},
      {[](json& m) {}, "mediaType", "application/vnd.oci.image.index.v1+json"},
  };
  for (const auto& c : cases) {
    json m = manifest();
    c.mutate(m);
    auto got = fields(checkManifestSchema(m, c.declared));
    EXPECT_NE(std::find(got.begin(), got.end(), c.field), got.end()) << c.field << " in " << json(got).dump();
  }
  // An image of zero layers (FROM scratch with only metadata), OCI as Docker: containerd and
  // podman run it, so the schema's minItems is no violation (image.layers.empty reports it).
  json empty = manifest();
  empty["layers"] = json::array();
  EXPECT_TRUE(checkManifestSchema(empty, "").empty()) << json(fields(checkManifestSchema(empty, ""))).dump();
}

TEST(SchemaCheck, ConfigViolationsNameTheField) {
  struct Case {
    std::function<void(json&)> mutate;
    std::string field;
  };
  std::vector<Case> cases = {
      {[](json& c) { c["config"]["User"] = 1000; }, "config.User"},
      {[](json& c) { c["variant"] = 8; }, "variant"},
      {[](json& c) { c["config"]["Env"].push_back("NOEQUALS"); }, "config.Env[1]"},
      {[](json& c) { c["config"]["Env"].push_back("=x"); }, "config.Env[1]"},
      {[](json& c) { c["rootfs"]["type"] = "tar"; }, "rootfs.type"},
      {[](json& c) { c.erase("os"); }, "os"},
      {[](json& c) {
         c["history"] = {{{"empty_layer", "yes"}}};
       },
       "history[0].empty_layer"},
  };
  for (const auto& c : cases) {
    json cfg = config();
    c.mutate(cfg);
    auto got = fields(checkConfigSchema(cfg));
    EXPECT_NE(std::find(got.begin(), got.end(), c.field), got.end()) << c.field << " in " << json(got).dump();
  }
}

TEST(SchemaCheck, IndexPlatformAndUri) {
  json ix = {{"schemaVersion", 2},
             {"manifests",
              {{{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                {"digest", kD},
                {"size", 2},
                {"platform", {{"os", "linux"}, {"architecture", "arm64"}, {"variant", 8}}}}}}};
  EXPECT_EQ(fields(checkIndexSchema(ix)), std::vector<std::string>{"manifests[0].platform.variant"});
  EXPECT_TRUE(isUri("https://example.com/x"));
  EXPECT_TRUE(isUri("urn:example:1"));
  EXPECT_FALSE(isUri("not a url"));
  EXPECT_FALSE(isUri("/relative/path"));
  EXPECT_FALSE(isUri("1http://x"));
}

}  // namespace oci_schema_check_test
