#include "kernodeck/hook/hook_config.h"

#include <gtest/gtest.h>

#include <functional>

namespace hook_hook_config_test {

using namespace kernodeck;
using nlohmann::ordered_json;

namespace {

hook::HookEntry entry(std::vector<std::string> flags = {"--policy", "enforce"}) {
  auto e = hook::makeHookEntry("/usr/local/bin/kernodeck-hook", flags);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return *e;
}

// NVIDIA's CDI spec as nvidia-ctk writes it (JSON), with the toolkit's own hooks.
ordered_json nvidiaSpec() {
  return ordered_json::parse(R"({
    "cdiVersion": "0.5.0", "kind": "nvidia.com/gpu",
    "devices": [{"name": "0", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}},
                {"name": "all", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}}],
    "containerEdits": {
      "env": ["NVIDIA_VISIBLE_DEVICES=void"],
      "deviceNodes": [{"path": "/dev/nvidiactl"}, {"path": "/dev/nvidia-uvm"}],
      "hooks": [{"hookName": "createContainer", "path": "/usr/bin/nvidia-cdi-hook", "args": ["nvidia-cdi-hook", "update-ldcache"]}]
    }})");
}

}  // namespace

TEST(HookConfig, EntriesComeOnlyFromFlagsTheHookParses) {
  hook::HookEntry e = entry({"--policy", "enforce", "--host-root=/host", "--timeout-ms", "1500"});
  EXPECT_EQ(e.args,
            (std::vector<std::string>{"kernodeck-hook", "--policy", "enforce", "--host-root=/host", "--timeout-ms",
                                      "1500", "--log", "/var/log/kernodeck/hook.log", "createRuntime"}));
  EXPECT_EQ(entry({}).args[2], "warn");  // the policy is written out
  struct Bad {
    std::vector<std::string> flags;
    const char* says;
  } bad[] = {
      {{"--host_root", "/h"}, "unknown option '--host_root'"},
      {{"--policy", "Enforce"}, "--policy takes warn or enforce"},
      {{"--polcy", "enforce"}, "'--polcy' looks like a misspelt --policy"},
      {{"--timeout-ms", "0"}, "out of range"},
      {{"--policy", "warn", "prestart"}, "unexpected argument 'prestart'"},
  };
  for (const auto& b : bad) {
    auto r = hook::makeHookEntry("/usr/local/bin/kernodeck-hook", b.flags);
    ASSERT_FALSE(r.ok()) << b.says;
    EXPECT_NE(r.error().message.find(b.says), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(hook::makeHookEntry("kernodeck-hook", {}).ok());  // a relative binary
}

TEST(HookConfig, OurCdiSpecIsValidAndRunsTheHook) {
  ordered_json spec = hook::cdiSpec(entry(), "kernodeck.io/hook", "check");
  EXPECT_TRUE(hook::validateCdiSpec(spec).ok());
  EXPECT_EQ(spec["cdiVersion"], "0.5.0");
  const auto& h = spec["devices"][0]["containerEdits"]["hooks"][0];
  EXPECT_EQ(h["hookName"], "createRuntime");
  EXPECT_EQ(h["path"], "/usr/local/bin/kernodeck-hook");
  EXPECT_EQ(h["args"].back(), "createRuntime");
}

TEST(HookConfig, AddingToNvidiasSpecKeepsItsHooksAndIsIdempotent) {
  auto once = hook::addHookToCdiSpec(nvidiaSpec(), entry());
  ASSERT_TRUE(once.ok()) << once.error().message;
  const auto& hooks = (*once)["containerEdits"]["hooks"];
  ASSERT_EQ(hooks.size(), 2u);
  EXPECT_EQ(hooks[0]["path"], "/usr/bin/nvidia-cdi-hook");  // NVIDIA's stays, first
  EXPECT_EQ(hooks[1]["path"], "/usr/local/bin/kernodeck-hook");
  auto twice = hook::addHookToCdiSpec(*once, entry());
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(*twice, *once);
  // New flags replace our entry, never add a second one.
  auto changed = hook::addHookToCdiSpec(*once, entry({"--policy", "warn"}));
  ASSERT_TRUE(changed.ok());
  ASSERT_EQ((*changed)["containerEdits"]["hooks"].size(), 2u);
  EXPECT_EQ((*changed)["containerEdits"]["hooks"][1]["args"][2], "warn");
  // Key order of the toolkit's file is kept.
  EXPECT_EQ(once->begin().key(), "cdiVersion");
  // A spec without top-level edits gets them.
  ordered_json bare = nvidiaSpec();
  bare.erase("containerEdits");
  auto added = hook::addHookToCdiSpec(bare, entry());
  ASSERT_TRUE(added.ok());
  EXPECT_EQ((*added)["containerEdits"]["hooks"].size(), 1u);
}

TEST(HookConfig, WhatIsNotACdiSpecIsRefusedByField) {
  struct Case {
    const char* name;
    std::function<void(ordered_json&)> spoil;
    const char* says;
  };
  std::vector<Case> cases = {
      {"version", [](ordered_json& s) { s["cdiVersion"] = 5; }, "cdiVersion"},
      {"version text", [](ordered_json& s) { s["cdiVersion"] = "0.5"; }, "MAJOR.MINOR.PATCH"},
      {"kind", [](ordered_json& s) { s["kind"] = "gpu"; }, "VENDOR/CLASS"},
      {"no devices", [](ordered_json& s) { s["devices"] = ordered_json::array(); }, "devices"},
      {"nameless device", [](ordered_json& s) { s["devices"][0].erase("name"); }, "devices[0] has no name"},
      {"hooks", [](ordered_json& s) { s["containerEdits"]["hooks"] = "x"; }, "containerEdits.hooks is not an array"},
      {"hook", [](ordered_json& s) { s["containerEdits"]["hooks"][0].erase("path"); }, "containerEdits.hooks[0] needs"},
  };
  for (const auto& c : cases) {
    ordered_json s = nvidiaSpec();
    c.spoil(s);
    auto r = hook::addHookToCdiSpec(s, entry());
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << c.name << ": " << r.error().message;
  }
  EXPECT_FALSE(hook::addHookToCdiSpec(ordered_json::array(), entry()).ok());
}

TEST(HookConfig, AddingToARuntimeConfigKeepsEveryOtherHook) {
  ordered_json cfg = ordered_json::parse(R"({"ociVersion": "1.0.2", "hooks": {
      "prestart": [{"path": "/usr/bin/nvidia-container-runtime-hook", "args": ["nvidia-container-runtime-hook", "prestart"]}],
      "createRuntime": [{"path": "/usr/bin/nvidia-ctk", "args": ["nvidia-ctk", "hook", "x"]}]}})");
  auto once = hook::addHookToRuntimeConfig(cfg, entry());
  ASSERT_TRUE(once.ok());
  EXPECT_EQ((*once)["hooks"]["prestart"], cfg["hooks"]["prestart"]);
  ASSERT_EQ((*once)["hooks"]["createRuntime"].size(), 2u);
  EXPECT_EQ((*once)["hooks"]["createRuntime"][0]["path"], "/usr/bin/nvidia-ctk");
  EXPECT_EQ((*once)["hooks"]["createRuntime"][1]["path"], "/usr/local/bin/kernodeck-hook");
  EXPECT_EQ(*hook::addHookToRuntimeConfig(*once, entry()), *once);
  auto fresh = hook::addHookToRuntimeConfig(ordered_json::parse(R"({"ociVersion": "1.0.2"})"), entry());
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ((*fresh)["hooks"]["createRuntime"].size(), 1u);
  EXPECT_FALSE(hook::addHookToRuntimeConfig(ordered_json::parse(R"({"hooks": {}})"), entry()).ok());  // not a config
  EXPECT_FALSE(hook::addHookToRuntimeConfig(ordered_json::parse(R"({"ociVersion": "1", "hooks": []})"), entry()).ok());
}

// Removing is the exact inverse of adding: NVIDIA's hooks kept in order, and what adding made
// (containerEdits, hooks) dropped again when it holds nothing else.
TEST(HookConfig, RemovingUndoesAddingExactly) {
  ordered_json spec = nvidiaSpec();
  auto added = hook::addHookToCdiSpec(spec, entry());
  ASSERT_TRUE(added.ok());
  auto removed = hook::removeHookFromCdiSpec(*added);
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_EQ(*removed, spec);
  ordered_json bare = nvidiaSpec();
  bare.erase("containerEdits");
  auto bareAdded = hook::addHookToCdiSpec(bare, entry());
  ASSERT_TRUE(bareAdded.ok());
  EXPECT_EQ(*hook::removeHookFromCdiSpec(*bareAdded), bare);
  EXPECT_EQ(*hook::removeHookFromCdiSpec(spec), spec);  // nothing of ours: unchanged
  EXPECT_FALSE(hook::removeHookFromCdiSpec(ordered_json::array()).ok());

  ordered_json cfg = ordered_json::parse(R"({"ociVersion": "1.0.2", "hooks": {
      "createRuntime": [{"path": "/usr/bin/nvidia-ctk", "args": ["nvidia-ctk", "hook", "x"]}]}})");
  EXPECT_EQ(*hook::removeHookFromRuntimeConfig(*hook::addHookToRuntimeConfig(cfg, entry())), cfg);
  ordered_json plain = ordered_json::parse(R"({"ociVersion": "1.0.2"})");
  EXPECT_EQ(*hook::removeHookFromRuntimeConfig(*hook::addHookToRuntimeConfig(plain, entry())), plain);
  EXPECT_FALSE(hook::removeHookFromRuntimeConfig(ordered_json::parse(R"({"hooks": {}})")).ok());
}

}  // namespace hook_hook_config_test
