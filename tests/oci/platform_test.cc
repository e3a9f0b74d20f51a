#include "kernodeck/oci/platform.h"

#include <gtest/gtest.h>

namespace oci_platform_test {

using namespace kernodeck::oci;

namespace {
Index indexOf(std::vector<Platform> ps) {
  Index ix;
  for (auto& p : ps) {
    Descriptor d;
    d.platform = p;
    ix.manifests.push_back(d);
  }
  return ix;
}
}  // namespace

TEST(Platform, ParseAndNormalize) {
  EXPECT_EQ(parsePlatform("linux/x86_64")->str(), "linux/amd64");
  EXPECT_EQ(parsePlatform("linux/aarch64")->str(), "linux/arm64");
  EXPECT_EQ(parsePlatform("linux/arm64/v8")->str(), "linux/arm64");
  EXPECT_EQ(parsePlatform("linux/arm")->str(), "linux/arm/v7");
  EXPECT_FALSE(parsePlatform("linux").ok());
  EXPECT_FALSE(parsePlatform("linux/arm/v7/x").ok());
}

TEST(Platform, Selection) {
  Index ix = indexOf({{"linux", "amd64", "", ""},
                      {"linux", "arm64", "v8", ""},
                      {"linux", "arm", "v6", ""},
                      {"windows", "amd64", "", ""}});
  EXPECT_EQ(*selectPlatform(ix, {"linux", "amd64", "", ""}), 0u);
  EXPECT_EQ(*selectPlatform(ix, {"linux", "arm64", "", ""}), 1u);
  EXPECT_EQ(*selectPlatform(ix, {"linux", "arm64", "v8", ""}), 1u);
  EXPECT_EQ(*selectPlatform(ix, {"linux", "arm", "v7", ""}), 2u);  // v7 runs v6
  EXPECT_EQ(*selectPlatform(ix, {"windows", "amd64", "", ""}), 3u);
  auto miss = selectPlatform(ix, {"linux", "s390x", "", ""});
  ASSERT_FALSE(miss.ok());
  EXPECT_NE(miss.error().message.find("linux/arm64"), std::string::npos);
  // containerd's platforms.Only: amd64 runs 386 and, without a variant, no amd64/v2; amd64/v3
  // runs v2 first; arm64 runs arm v8 down to v5.
  Index amd = indexOf({{"linux", "386", "", ""}, {"linux", "amd64", "v2", ""}, {"linux", "amd64", "v3", ""}});
  EXPECT_EQ(*selectPlatform(amd, {"linux", "amd64", "", ""}), 0u);
  EXPECT_EQ(*selectPlatform(amd, {"linux", "amd64", "v3", ""}), 2u);
  EXPECT_EQ(*selectPlatform(amd, {"linux", "amd64", "v4", ""}), 2u);
  EXPECT_FALSE(platformRank({"linux", "amd64", "v2", ""}, {"linux", "amd64", "", ""}));
  EXPECT_EQ(platformRank({"linux", "amd64", "v1", ""}, {"linux", "amd64", "", ""}), 0);
  EXPECT_EQ(platformRank({"linux", "amd64", "", ""}, {"linux", "amd64", "v3", ""}), 12);
  EXPECT_EQ(
      *selectPlatform(indexOf({{"linux", "arm", "v6", ""}, {"linux", "arm", "v7", ""}}), {"linux", "arm64", "", ""}),
      1u);
  EXPECT_FALSE(platformRank({"linux", "arm64", "", ""}, {"linux", "arm", "v7", ""}));
  Index v5only = indexOf({{"linux", "arm", "v7", ""}});
  EXPECT_FALSE(selectPlatform(v5only, {"linux", "arm", "v6", ""}).ok());  // v6 cannot run v7
}

}  // namespace oci_platform_test
