// Referrers indexes and artifact manifests as someone who can push writes them: an entry that is
// not a valid descriptor is kept, named and marked, never the end of the listing.
#include "kernodeck/registry/referrers.h"

#include <gtest/gtest.h>

namespace registry_referrers_test {

using namespace kernodeck;

namespace {

const std::string kType = "application/vnd.kernodeck.report.v1+json";
const std::string A = "sha256:" + std::string(64, 'a'), B = "sha256:" + std::string(64, 'b');

}  // namespace

TEST(Referrers, AMalformedEntryIsMarkedAndTheOthersListed) {
  std::string index = R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[
    {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
                      A + R"(","size":10,"artifactType":")" + kType + R"(",
     "annotations":{"org.opencontainers.image.created":2099}},
    {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
                      B + R"(","size":11,"artifactType":")" + kType + R"("},
    {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
                      B + R"(","size":-1,"artifactType":")" + kType + R"("},
    {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
                      A + R"(","size":12,"artifactType":"application/spdx+json"},
    {"digest":7,"artifactType":3}, null, "x"]})";
  auto refs = registry::parseReferrers(index, kType, "the index");
  ASSERT_TRUE(refs.ok()) << refs.error().message;
  ASSERT_EQ(refs->size(), 3u);  // another type, and entries whose type is not ours, are not listed
  EXPECT_NE((*refs)[0].problem, "");
  EXPECT_EQ((*refs)[0].digest, A);
  EXPECT_EQ((*refs)[0].position, 0u);
  EXPECT_EQ((*refs)[1].problem, "");
  EXPECT_EQ((*refs)[1].desc.digest.str(), B);
  EXPECT_NE((*refs)[2].problem, "");
  EXPECT_EQ((*refs)[2].position, 2u);
  auto all = registry::parseReferrers(index, "", "the index");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 7u);
  for (const char* bad : {"", "[]", "{}", R"({"manifests":{}})"}) {
    auto r = registry::parseReferrers(bad, kType, "the index");
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("the index"), std::string::npos);
    }
  }
}

TEST(Referrers, ArtifactManifestsOfTheWrongShapeAreCorruptNotAThrow) {
  for (const char* bad :
       {"", "null", R"({"mediaType":5,"layers":[]})",
        R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":5},"layers":[]})",
        R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[{"mediaType":"x"}]})",
        R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[],"subject":{"digest":"sha256:zz"}})"}) {
    auto a = registry::parseArtifact(bad, "the artifact");
    if (std::string(bad).find("config") != std::string::npos) {
      ASSERT_TRUE(a.ok()) << bad;  // a config type of the wrong type only leaves artifactType empty
      EXPECT_EQ(a->artifactType, "");
    } else {
      EXPECT_FALSE(a.ok()) << bad;
    }
  }
  auto ok = registry::parseArtifact(
      R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"t","layers":[],"annotations":{"a":"b","n":1}})",
      "the artifact");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->annotations.size(), 1u);  // the number is not a string annotation
}

// Copying, comparing or dumping a parsed value recurses once per level: a document nested
// 100000 deep (200 KB, well under any size bound) is refused by its reader before a tree is built.
TEST(Referrers, DocumentsNestedPastTheBoundAreRefusedBeforeParsing) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string artifact = R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"t","layers":[],)"
                         R"("annotations":{"a":)" +
                         deep + "}}";
  EXPECT_FALSE(registry::parseArtifact(artifact, "the artifact").ok());
  std::string index = R"({"schemaVersion":2,"manifests":[{"mediaType":"x","digest":")" + A +
                      R"(","size":1,"artifactType":")" + kType + R"(","annotations":{"a":)" + deep + "}}]}";
  EXPECT_FALSE(registry::parseReferrers(index, kType, "the index").ok());
  // Within the bound, the same shapes still parse.
  std::string shallow = std::string(100, '[') + std::string(100, ']');
  std::string ok = R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"t","layers":[],)"
                   R"("annotations":{"a":)" +
                   shallow + "}}";
  EXPECT_TRUE(registry::parseArtifact(ok, "the artifact").ok());
}

}  // namespace registry_referrers_test
