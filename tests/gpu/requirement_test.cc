#include "kernodeck/gpu/requirement.h"

#include <gtest/gtest.h>

namespace gpu_requirement_test {

using namespace kernodeck::gpu;

// The NVIDIA container toolkit's own parser cases.
TEST(Requirement, ParsesAsTheToolkit) {
  EXPECT_TRUE(parseRequirement("")->terms.empty());
  EXPECT_FALSE(parseRequirement("notvalid").ok());
  EXPECT_TRUE(parseRequirement("foo=45")->terms.empty());  // unknown property: ignored
  EXPECT_FALSE(parseRequirement("cuda=foo").ok());
  for (const char* op : {">=", ">", "<=", "<", "=", "!="}) {
    auto r = parseRequirement(std::string("cuda") + op + "11.6");
    ASSERT_TRUE(r.ok()) << op;
    ASSERT_EQ(r->terms.size(), 1u);
    EXPECT_EQ(r->terms[0][0].op, op);
    EXPECT_EQ(r->terms[0][0].value, "11.6");
  }
  auto ignored = parseRequirement("cuda>=11.6 foo=bar");
  ASSERT_EQ(ignored->terms.size(), 1u);
  auto r = parseRequirement("cuda<13.6 cuda>=11.6,arch=5.3");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->terms.size(), 2u);
  EXPECT_EQ(r->terms[0].size(), 1u);
  EXPECT_EQ(r->terms[1].size(), 2u);
}

// Ground truth: "cuda<13.6 cuda>=11.6,arch=5.3" = cuda<13.6 OR (cuda>=11.6 AND arch=5.3).
TEST(Requirement, OrOfAnds) {
  auto r = *parseRequirement("cuda<13.6 cuda>=11.6,arch=5.3");
  struct Case {
    Properties p;
    Tri want;
  } cases[] = {
      {{"12.0", "", "8.0", ""}, Tri::True},  // first term
      {{"14.0", "", "5.3", ""}, Tri::True},  // second term
      {{"14.0", "", "8.0", ""}, Tri::False}, {{"10.0", "", "", ""}, Tri::True},
      {{"14.0", "", "", ""}, Tri::Unknown},  // arch not known: undecidable, not false
  };
  for (const auto& c : cases) EXPECT_EQ(evaluate(r, c.p), c.want) << c.p.cuda << "/" << c.p.arch;
}

TEST(Requirement, DriverBranchAndBrand) {
  auto r = *parseRequirement("cuda>=12.1 brand=tesla,driver>=470,driver<471");
  EXPECT_EQ(evaluate(r, {"12.4", "550.54.15", "9.0", "nvidia"}), Tri::True);
  EXPECT_EQ(evaluate(r, {"11.4", "470.199.02", "7.5", "Tesla"}), Tri::True);  // brand is case-insensitive
  EXPECT_EQ(evaluate(r, {"11.4", "470.199.02", "7.5", "geforce"}), Tri::False);
  EXPECT_EQ(evaluate(r, {"12.0", "525.60.13", "8.0", "tesla"}), Tri::False);
  std::string why;
  evaluate(r, {"12.0", "525.60.13", "8.0", "tesla"}, &why);
  EXPECT_NE(why.find("cuda>=12.1"), std::string::npos) << why;
}

TEST(Requirement, FromEnvironment) {
  auto a = requirementsFromEnv(
      {{"NVIDIA_REQUIRE_CUDA", "cuda>=12.1"}, {"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}, {"CUDA_VERSION", "12.1.1"}});
  EXPECT_EQ(a.requirements.size(), 2u);  // CUDA_VERSION only counts without NVIDIA_REQUIRE_CUDA
  auto legacy = requirementsFromEnv({{"CUDA_VERSION", "11.8.0"}});
  ASSERT_EQ(legacy.requirements.size(), 1u);
  EXPECT_EQ(legacy.requirements[0].terms[0][0].str(), "cuda>=11.8");
  auto off = requirementsFromEnv({{"NVIDIA_DISABLE_REQUIRE", "true"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=99"}});
  EXPECT_TRUE(off.disabled);
  EXPECT_TRUE(off.requirements.empty());
  auto bad = requirementsFromEnv({{"NVIDIA_REQUIRE_X", "garbage"}});
  EXPECT_EQ(bad.errors.size(), 1u);
}

TEST(Requirement, VisibleDevicesAndCapabilities) {
  EXPECT_EQ(parseVisibleDevices(std::nullopt).kind, VisibleDevices::Unset);
  EXPECT_EQ(parseVisibleDevices(std::string("void")).kind, VisibleDevices::Void);
  EXPECT_EQ(parseVisibleDevices(std::string("")).kind, VisibleDevices::Void);
  EXPECT_EQ(parseVisibleDevices(std::string("none")).kind, VisibleDevices::None);
  EXPECT_FALSE(parseVisibleDevices(std::string("none")).requestsGpus());
  EXPECT_TRUE(parseVisibleDevices(std::string("all")).requestsGpus());
  auto l = parseVisibleDevices(std::string("0, GPU-abc,MIG-def"));
  EXPECT_EQ(l.ids, (std::vector<std::string>{"0", "GPU-abc", "MIG-def"}));
  EXPECT_TRUE(l.requestsMig());
  EXPECT_TRUE(parseVisibleDevices(std::string("0:1")).requestsMig());
  EXPECT_FALSE(parseVisibleDevices(std::string("0,1")).requestsMig());
  EXPECT_EQ(parseDriverCapabilities(std::nullopt), (std::vector<std::string>{"compute", "utility"}));
  EXPECT_EQ(parseDriverCapabilities(std::string("all")).size(), 6u);
  EXPECT_EQ(parseDriverCapabilities(std::string("compute,video")), (std::vector<std::string>{"compute", "video"}));
}

// NVIDIA_DISABLE_REQUIRE is read with Go's strconv.ParseBool, as the toolkit does.
TEST(Requirement, DisableRequireIsGoParseBool) {
  struct Case {
    const char* value;
    bool disabled;
    bool ignoredNote;
  } cases[] = {
      {"1", true, false},      {"t", true, false},      {"T", true, false},      {"TRUE", true, false},
      {"true", true, false},   {"True", true, false},   {"0", false, false},     {"f", false, false},
      {"false", false, false}, {"FALSE", false, false}, {"False", false, false}, {"yes", false, true},
      {"on", false, true},     {"tRUE", false, true},   {" true", false, true},  {"", false, true},
  };
  for (const auto& c : cases) {
    auto r = requirementsFromEnv({{"NVIDIA_DISABLE_REQUIRE", c.value}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.0"}});
    EXPECT_EQ(r.disabled, c.disabled) << "'" << c.value << "'";
    EXPECT_EQ(r.requirements.size(), c.disabled ? 0u : 1u) << c.value;
    EXPECT_EQ(r.ignored.size(), c.ignoredNote ? 1u : 0u) << c.value;
  }
  auto misspelt = requirementsFromEnv({{"NVIDIA_DISABLE_REQUIRES", "true"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=12.0"}});
  EXPECT_FALSE(misspelt.disabled);
  EXPECT_EQ(misspelt.requirements.size(), 1u);
  ASSERT_EQ(misspelt.ignored.size(), 1u);
  EXPECT_NE(misspelt.ignored[0].find("NVIDIA_DISABLE_REQUIRES is set, but the toolkit reads NVIDIA_DISABLE_REQUIRE"),
            std::string::npos);
}

TEST(Requirement, LegacyImagesAndJetpackAsTheToolkit) {
  EXPECT_TRUE(isLegacyCudaImage({{"CUDA_VERSION", "11.8.0"}}));
  EXPECT_TRUE(isLegacyCudaImage({{"CUDA_VERSION", "11.8.0"}, {"NVIDIA_REQUIRE_CUDA", ""}}));  // empty counts as unset
  EXPECT_FALSE(isLegacyCudaImage({{"CUDA_VERSION", "11.8.0"}, {"NVIDIA_REQUIRE_CUDA", "cuda>=11.8"}}));
  EXPECT_FALSE(isLegacyCudaImage({{"CUDA_VERSION", ""}}));
  auto empty = requirementsFromEnv({{"CUDA_VERSION", "12.2.0"}, {"NVIDIA_REQUIRE_CUDA", ""}});
  EXPECT_TRUE(empty.legacy);
  ASSERT_EQ(empty.requirements.size(), 2u);  // the empty NVIDIA_REQUIRE_CUDA (always true) and cuda>=12.2
  auto bad = requirementsFromEnv({{"CUDA_VERSION", "latest"}});
  EXPECT_EQ(bad.requirements.size(), 0u);
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_NE(bad.errors[0].find("CUDA_VERSION"), std::string::npos);
  auto jetpack =
      requirementsFromEnv({{"NVIDIA_REQUIRE_JETPACK", "csv-mounts=all"}, {"NVIDIA_REQUIRE_JETPACK_HOST_MOUNTS", "x"}});
  EXPECT_TRUE(jetpack.requirements.empty());
  EXPECT_TRUE(jetpack.errors.empty());
  EXPECT_EQ(requirementsFromEnv({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.1"}}).requirements[0].source, "NVIDIA_REQUIRE_CUDA");
}

TEST(Requirement, EvaluateNamesTheFailedConditions) {
  auto r = *parseRequirement("cuda>=12.0,brand=tesla driver>=600");
  std::vector<Condition> failed;
  EXPECT_EQ(evaluate(r, {"12.4", "550.54.15", "9.0", "nvidia"}, nullptr, &failed), Tri::False);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[0].str(), "brand=tesla");
  EXPECT_EQ(failed[1].str(), "driver>=600");
}

}  // namespace gpu_requirement_test
