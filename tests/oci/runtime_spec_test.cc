// parseContainerConfig builds only the parts of config.json the hook reads (root, process.env,
// process.user.additionalGids, linux.devices, annotations, hooks): what it reads is all there
// however much else the runtime wrote around it (mounts, capabilities, a seccomp profile), and
// keys of the same name elsewhere do not leak in.
#include "kernodeck/oci/runtime_spec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace oci_runtime_spec_test {

using namespace kernodeck;
using nlohmann::json;

TEST(RuntimeSpec, WhatTheHookReadsSurvivesEverythingAroundIt) {
  json seccomp = {{"defaultAction", "SCMP_ACT_ERRNO"}, {"syscalls", json::array()}};
  for (int i = 0; i < 200; ++i)
    seccomp["syscalls"].push_back({{"names", {"read", "write"}}, {"action", "SCMP_ACT_ALLOW"}, {"env", {"X=1"}}});
  json cfg = {{"ociVersion", "1.0.2"},
              {"mounts", {{{"destination", "/proc"}, {"type", "proc"}, {"devices", {{{"path", "/dev/decoy"}}}}}}},
              {"root", {{"path", "rootfs"}, {"readonly", true}}},
              {"process",
               {{"env", {"NVIDIA_VISIBLE_DEVICES=0", "PATH=/bin"}},
                {"user", {{"uid", 0}, {"additionalGids", {44, 109}}}},
                {"capabilities", {{"bounding", {"CAP_CHOWN"}}}},
                {"devices", {"not read"}}}},
              {"linux",
               {{"devices", {{{"path", "/dev/nvidia0"}, {"type", "c"}, {"major", 195}, {"minor", 0}}}},
                {"seccomp", seccomp},
                {"env", {"NOT=read"}}}},
              {"annotations", {{"io.kernodeck.policy", "enforce"}}},
              {"hooks", {{"createRuntime", {{{"path", "/usr/local/bin/kernodeck-hook"}}}}}}};
  auto c = oci::parseContainerConfig(cfg.dump(), "/b");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->rootPath, "/b/rootfs");
  EXPECT_TRUE(c->rootReadonly);
  EXPECT_EQ(c->env, (std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", "0"}, {"PATH", "/bin"}}));
  EXPECT_EQ(c->additionalGids, (std::vector<uint32_t>{44, 109}));
  ASSERT_EQ(c->devices.size(), 1u);
  EXPECT_EQ(c->devices[0].path, "/dev/nvidia0");
  EXPECT_EQ(c->devices[0].major, 195);
  EXPECT_EQ(c->annotations.at("io.kernodeck.policy"), "enforce");
  EXPECT_EQ(c->hookPaths, (std::vector<std::string>{"/usr/local/bin/kernodeck-hook"}));
  EXPECT_FALSE(oci::parseContainerConfig("[1, 2]", "/b").ok());
  EXPECT_FALSE(oci::parseContainerConfig(R"({"root": {"path": "x"}, )", "/b").ok());
}

}  // namespace oci_runtime_spec_test
