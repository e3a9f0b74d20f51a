// The loader's checks of the LibTorch plugin's interface (libtorch/plugin.h), on the
// fake plugins tests/CMakeLists.txt builds from fake_plugin.cc: a plugin of another
// ABI version, size or compiler is refused with an error naming it, never called.
#include "kernodeck/libtorch/plugin.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace libtorch_plugin_test {

using namespace kernodeck;
using namespace kernodeck::libtorch;

namespace {

struct Refusal {
  const char* name;
  std::string path;
  std::vector<std::string> said;  // each in the error message
};

TEST(LibtorchPlugin, RefusesAPluginOfAnotherInterfaceNamingItAndBothVersions) {
  const std::string v1 = std::to_string(kAbiVersion), size = std::to_string(sizeof(PluginAbi));
  const std::vector<Refusal> table = {
      {"wrong version", FAKE_PLUGIN_V99, {FAKE_PLUGIN_V99, "ABI version 99", "expects version " + v1}},
      {"wrong size",
       FAKE_PLUGIN_SMALL,
       {FAKE_PLUGIN_SMALL, std::to_string(sizeof(PluginAbi) - 8) + "-byte", "has " + size + " bytes"}},
      {"no entry",
       FAKE_PLUGIN_NO_ENTRY,
       {FAKE_PLUGIN_NO_ENTRY, "not a Kernodeck LibTorch plugin", "kdk_torch_plugin_abi"}},
      {"not a library", std::string(SOURCE_DIR) + "/tests/libtorch/fake_plugin.cc", {"fake_plugin.cc"}},
      {"missing", "/nonexistent/libkernodeck_torch.so", {"/nonexistent/libkernodeck_torch.so"}},
  };
  for (const auto& t : table) {
    SCOPED_TRACE(t.name);
    auto r = loadPlugin(t.path);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().is(ErrorKind::Unsupported));
    for (const auto& s : t.said) EXPECT_NE(r.error().message.find(s), std::string::npos) << r.error().message;
  }
}

TEST(LibtorchPlugin, CallsAMatchingPluginThroughItsInterface) {
  auto r = loadPlugin(FAKE_PLUGIN_OK);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const PluginAbi* abi = *r;
  TorchInfo info;
  std::string version;
  abi->torch_info(&info, &version,
                  [](void* ctx, const char* s, size_t n) { static_cast<std::string*>(ctx)->assign(s, n); });
  EXPECT_EQ(version, "fake-1.0");
  EXPECT_EQ(info.cuda_devices, 3);
  EXPECT_EQ(abi->resume_continue("x", 7, 0, "y"), 7);
  ASSERT_TRUE(reportEntries(abi).ok());
}

TEST(LibtorchPlugin, ReportEntriesNeedTheSameCompilerAndLibraryAbi) {
  auto r = loadPlugin(FAKE_PLUGIN_OTHER_CXX);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto e = reportEntries(*r);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("\"other compiler\""), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find(KDK_TORCH_CXX_BUILD), std::string::npos) << e.error().message;
}

}  // namespace
}  // namespace libtorch_plugin_test
