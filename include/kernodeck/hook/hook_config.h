// Where runtimes read hooks from, and kernodeck-hook's entry in each: an OCI hooks.d file
// (podman, CRI-O), a CDI spec (podman, containerd, CRI-O with CDI devices), a runc
// config.json. Pure functions on JSON; the commands that read and write files are in
// hook_config_cli.cc.
//
// Every entry is built from hook flags that kernodeck-hook itself parses without a usage
// error, so an installed hook can never start in the "cannot read my command line" state.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::hook {

// The CDI version of the specs we write: the newest that podman 4.3 and containerd 1.7
// (container-device-interface 0.5) read; hooks exist since 0.3.
inline constexpr const char* kCdiVersion = "0.5.0";

// argv[0] of every hook entry we write: the marker by which a later install finds (and replaces)
// our entry whatever its path says.
inline constexpr const char* kHookMarker = "kernodeck-hook";

struct HookEntry {
  std::string path = "/usr/local/bin/kernodeck-hook";
  std::vector<std::string> args;  // argv, argv[0] included, the stage last
  int timeoutSeconds = 5;
};

// The entry for hook flags such as {"--policy", "enforce", "--host-root", "/host"}: checked
// with parseCommandLine; --log defaults to /var/log/kernodeck/hook.log; stage createRuntime.
Result<HookEntry> makeHookEntry(const std::string& binary, const std::vector<std::string>& hookFlags);

// Whether an entry of a hook list is kernodeck-hook's: argv[0] is kHookMarker, or the path's last
// component is kernodeck-hook.
bool isKernodeckHook(const nlohmann::ordered_json& hook);

// An OCI hooks.d file (podman, CRI-O): createRuntime, always.
nlohmann::ordered_json hooksDFile(const HookEntry& e);

// A CDI spec with one device, KIND=NAME (default kernodeck.io/hook=check), whose edits are the
// hook: `podman run --device kernodeck.io/hook=check` runs the check.
nlohmann::ordered_json cdiSpec(const HookEntry& e, const std::string& kind = "kernodeck.io/hook",
                               const std::string& device = "check");

// Checks the parts of a CDI spec that matter here (cdiVersion, kind vendor/class, a non-empty
// device list with names, containerEdits and hooks of the right types): an error names the field.
Status validateCdiSpec(const nlohmann::ordered_json& spec);

// `spec` with the hook in its top-level containerEdits.hooks, so that every device of the spec
// (every GPU of NVIDIA's nvidia.com/gpu spec) runs it: an earlier kernodeck-hook entry is
// replaced in place, every other hook kept in order. Validated before and after.
Result<nlohmann::ordered_json> addHookToCdiSpec(nlohmann::ordered_json spec, const HookEntry& e);

// A runc/crun config.json with the hook appended to hooks.createRuntime: every other hook
// (NVIDIA's included) kept, an earlier kernodeck-hook entry replaced.
Result<nlohmann::ordered_json> addHookToRuntimeConfig(nlohmann::ordered_json config, const HookEntry& e);

// The undoing of the two above (`cdi remove`, `runc-config --remove`, the package's removal):
// `spec` / `config` without any kernodeck-hook entry, every other hook kept in order, and a
// hooks list (and containerEdits, the hooks object) left empty by it dropped, as it was before
// the hook was added. Validated as the adding functions validate.
Result<nlohmann::ordered_json> removeHookFromCdiSpec(nlohmann::ordered_json spec);
Result<nlohmann::ordered_json> removeHookFromRuntimeConfig(nlohmann::ordered_json config);

// `kernodeck-hook cdi ...`, `kernodeck-hook runc-config ...`, `kernodeck-hook hooks-d ...`:
// exit 0 done, 2 usage error or a document that is not what the command takes, 3 I/O failure.
int configCommand(const std::vector<std::string>& args);

}  // namespace kernodeck::hook
