// Shared by the tests that start real containers with kernodeck-hook under each engine
// (hook_engines_test.cc: podman, runc, crun; hook_containerd_test.cc: containerd 1.6 and 1.7):
// the fake GPU host, a busybox root, NVIDIA-style CDI specs and the check of one run's outcome.
#pragma once

#include <string>
#include <vector>

#include "support.h"

namespace kdktest::engines {

inline const std::string kHook = HOOK_BIN;

// The fake host NAME (tests/fixtures/hosts), made once per process; "" when it cannot be made.
std::string hostTree(const std::string& name);

// A folder holding /bin/busybox with sh and cat, made once per process.
std::string busyboxRootfs();

// Whether crun can run here: its hugetlb controller mounted as cgroup v1 (mounted if need be).
bool crunReady();

// A containers.conf with the ulimits these VMs allow (for CONTAINERS_CONF).
std::string containersConf();

// A CDI spec for the fake host's GPU 0, as nvidia-ctk would write it, under a kind unique to
// this run; removed at exit.
struct CdiSpec {
  std::string file, kind;
};

// `yaml`: written as nvidia-ctk writes it by default (YAML, /etc/cdi/nvidia.yaml), by hand
// so that the hook's own YAML writer is not what the runtime is checked against. `dir`: where the
// runtime reads specs (podman 4.3: /var/run/cdi; containerd: its cdi_spec_dirs).
CdiSpec fakeNvidiaSpec(const std::string& host, bool yaml = false, const std::string& dir = "/var/run/cdi");

// A YAML spec as a third party reads it (PyYAML); a JSON one as itself.
nlohmann::json readSpec(const std::string& file);

struct Outcome {
  std::string name, env;  // the case, and the NVIDIA_REQUIRE_CUDA it sets
  bool enforceStarts;
};

// Cuda 12.1 runs on driver 550 (CUDA 12.4); 12.9 does not.
inline const std::vector<Outcome> kCases = {{"allowed", "cuda>=12.1", true}, {"cannot run", "cuda>=12.9", false}};

// The last line of a file (the hook's log).
std::string lastLine(const std::string& file);

// A busybox bundle for RUNTIME (its `spec`, asking for GPU 0 with NVIDIA_REQUIRE_CUDA=REQUIRE,
// printing its host record), with the hook added by `kernodeck-hook runc-config` beside an
// existing hook; `extra` is merged into its config.
std::string bundleWithHook(const std::string& runtime, const std::string& policy, const std::string& host,
                           const std::string& log, const std::string& require, const nlohmann::json& extra);

// Checks one run: started (the container printed its host record) or refused.
void expectOutcome(const RunResult& r, const std::string& log, bool starts, bool allowed, const std::string& where,
                   const std::string& reasonVisible);

}  // namespace kdktest::engines
