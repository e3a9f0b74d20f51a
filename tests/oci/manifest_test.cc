#include "kernodeck/oci/manifest.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>

namespace oci_manifest_test {

using namespace kernodeck::oci;
using nlohmann::json;

namespace {
const std::string H = std::string(64, 'a');
json desc(const std::string& mt = "application/vnd.oci.image.layer.v1.tar+gzip") {
  return {{"mediaType", mt}, {"digest", "sha256:" + H}, {"size", 10}};
}
json manifest() {
  return {{"schemaVersion", 2},
          {"mediaType", media::kOciManifest},
          {"config", desc(media::kOciConfig)},
          {"layers", json::array({desc()})}};
}
}  // namespace

TEST(Manifest, AcceptsValidOciAndDocker) {
  EXPECT_TRUE(parseManifest(manifest().dump()).ok());
  json d = manifest();
  d["mediaType"] = media::kDockerManifest;
  d["layers"][0]["mediaType"] = media::kDockerLayerGzip;
  EXPECT_TRUE(parseManifest(d.dump()).ok());
}

TEST(Manifest, RejectsSpecViolations) {
  struct Case {
    const char* name;
    std::function<void(json&)> mutate;
  } cases[] = {
      {"schemaVersion 1", [](json& m) { m["schemaVersion"] = 1; }},
      {"no config", [](json& m) { m.erase("config"); }},
      {"negative size", [](json& m) { m["layers"][0]["size"] = -1; }},
      {"string size", [](json& m) { m["layers"][0]["size"] = "10"; }},
      {"upper-case hex", [](json& m) { m["layers"][0]["digest"] = "sha256:" + std::string(64, 'A'); }},
      {"bad media type", [](json& m) { m["layers"][0]["mediaType"] = "not a media type"; }},
      {"index media type", [](json& m) { m["mediaType"] = media::kOciIndex; }},
      {"annotations not strings",
       [](json& m) {
         m["annotations"] = {{"a", 1}};
       }},
  };
  for (const auto& c : cases) {
    json m = manifest();
    c.mutate(m);
    EXPECT_FALSE(parseManifest(m.dump()).ok()) << c.name;
  }
  EXPECT_FALSE(parseManifest("{not json").ok());
  EXPECT_FALSE(parseManifest("[1,2]").ok());
  EXPECT_FALSE(parseManifest(std::string(5 << 20, ' ')).ok());
}

TEST(Manifest, DetectsKind) {
  EXPECT_EQ(*detectKind(manifest().dump()), DocKind::Manifest);
  json ix = {{"schemaVersion", 2}, {"manifests", json::array()}};
  EXPECT_EQ(*detectKind(ix.dump()), DocKind::Index);
  EXPECT_EQ(*detectKind("", media::kDockerList), DocKind::Index);
  EXPECT_FALSE(detectKind(R"({"schemaVersion":1,"fsLayers":[]})").ok());
}

TEST(Manifest, IndexWithPlatforms) {
  json d = desc(media::kOciManifest);
  d["platform"] = {{"os", "linux"}, {"architecture", "arm64"}, {"variant", "v8"}};
  json ix = {{"schemaVersion", 2}, {"mediaType", media::kOciIndex}, {"manifests", json::array({d})}};
  auto parsed = parseIndex(ix.dump());
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(parsed->manifests[0].platform);
  EXPECT_EQ(parsed->manifests[0].platform->str(), "linux/arm64/v8");
  ix["manifests"][0]["platform"] = {{"os", "linux"}};
  EXPECT_FALSE(parseIndex(ix.dump()).ok());
}

TEST(Manifest, Config) {
  json c = {{"architecture", "amd64"},
            {"os", "linux"},
            {"config", {{"Env", {"PATH=/bin", "HF_TOKEN=x"}}, {"User", "1000"}, {"Labels", {{"a", "b"}}}}},
            {"rootfs", {{"type", "layers"}, {"diff_ids", {"sha256:" + H}}}}};
  auto parsed = parseConfig(c.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->env.size(), 2u);
  EXPECT_EQ(parsed->user, "1000");
  EXPECT_EQ(parsed->diffIds.size(), 1u);
  c["rootfs"]["type"] = "other";
  EXPECT_FALSE(parseConfig(c.dump()).ok());
  c["rootfs"]["type"] = "layers";
  c["rootfs"]["diff_ids"] = {"sha256:xyz"};
  EXPECT_FALSE(parseConfig(c.dump()).ok());
}

TEST(Manifest, LayerCompression) {
  EXPECT_EQ(layerCompression("application/vnd.oci.image.layer.v1.tar"), Compression::None);
  EXPECT_EQ(layerCompression("application/vnd.oci.image.layer.v1.tar+gzip"), Compression::Gzip);
  EXPECT_EQ(layerCompression("application/vnd.oci.image.layer.v1.tar+zstd"), Compression::Zstd);
  EXPECT_EQ(layerCompression(media::kDockerLayerGzip), Compression::Gzip);
  EXPECT_EQ(layerCompression("application/vnd.oci.image.layer.nondistributable.v1.tar+gzip"), Compression::Gzip);
  // Every layer type containerd (images/mediatypes.go) and containers/image define.
  EXPECT_EQ(layerCompression(media::kDockerLayerTar), Compression::None);
  EXPECT_EQ(layerCompression("application/vnd.docker.image.rootfs.foreign.diff.tar"), Compression::None);
  EXPECT_EQ(layerCompression("application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"), Compression::Gzip);
  EXPECT_EQ(layerCompression("application/vnd.oci.image.layer.nondistributable.v1.tar"), Compression::None);
  EXPECT_EQ(layerCompression("application/vnd.oci.image.layer.nondistributable.v1.tar+zstd"), Compression::Zstd);
  EXPECT_EQ(layerCompression("application/json"), Compression::Unknown);
}

// validMediaType checks by hand what a std::regex checked before (issue 31): the same answer on
// the edge cases and on many random strings over the characters that matter.
TEST(Manifest, ValidMediaTypeAgreesWithTheRegexItReplaced) {
  const std::regex re(R"(^[A-Za-z0-9][A-Za-z0-9!#$&^_.+\-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+\-]{0,126}$)");
  auto old = [&](const std::string& s) { return std::regex_match(s, re); };
  std::vector<std::string> cases = {"application/json",
                                    "a/b",
                                    "/b",
                                    "a/",
                                    "a//b",
                                    "a/b/c",
                                    "-a/b",
                                    "a/-b",
                                    "",
                                    std::string(127, 'a') + "/" + std::string(127, 'b'),
                                    std::string(128, 'a') + "/b",
                                    "a/" + std::string(128, 'b'),
                                    std::string("a\0/b", 4),
                                    "a /b",
                                    "a/b\n",
                                    "x!#$&^_.+-/y!#$&^_.+-",
                                    "a*/b"};
  std::mt19937 rng(31);
  const char kChars[] = "aZ09/!#$&^_.+- *\n\0%";
  const std::string alphabet(kChars, sizeof kChars - 1);
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng() % 12, ' ');
    for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    cases.push_back(s);
  }
  for (const auto& s : cases) EXPECT_EQ(validMediaType(s), old(s)) << json(s).dump();
}

}  // namespace oci_manifest_test
