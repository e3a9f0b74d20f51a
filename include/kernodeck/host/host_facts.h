// What a GPU node really has: NVIDIA driver and GPUs, device nodes, MIG, AMD
// ROCm agents. Everything is read through a HostFs (host_fs.h): files under a host root
// (default "/"), or in tests a fake /proc and /sys tree whose /dev is described in a file. Device files are only
// stat()ed, never opened: opening /dev/nvidia0 without persistence mode can
// block for seconds.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::host {

struct NvidiaDriver {
  std::string version;
  bool openModule = false;  // the open GPU kernel module (vs the proprietary one)
};

struct NvidiaGpu {
  std::string model, uuid, busLocation, busType;
  int minor = -1;
  bool excluded = false;
  std::string arch;   // compute capability inferred from the model ("9.0"), empty if unknown
  std::string brand;  // inferred ("tesla", "geforce", "quadro", "nvidia"), empty if unknown
};

struct MigDevice {
  int gpu = -1, gi = -1, ci = -1;  // ci -1 for a GPU instance's own access capability
  int minor = -1;
};

struct DeviceNode {
  std::string path;            // "/dev/nvidia0"
  int major = -1, minor = -1;  // expected
  bool present = false;
  std::string problem;  // empty when present with the expected numbers
};

struct AmdAgent {
  int node = -1;
  std::string gfx;       // "gfx942"
  int renderMinor = -1;  // /dev/dri/renderD<minor>
};

struct HostFacts {
  std::string root;
  std::optional<NvidiaDriver> nvidia;
  std::string sysModuleVersion;  // /sys/module/nvidia/version
  std::string maxCuda;           // newest CUDA the driver runs natively
  std::vector<NvidiaGpu> gpus;
  std::vector<DeviceNode> nodes;  // expected NVIDIA nodes and what was found
  std::vector<MigDevice> mig;
  std::vector<std::string> devCharMissing;  // /dev/char/MAJ:MIN links absent for present nodes
  bool amdDriver = false;
  std::string amdgpuVersion;
  std::vector<AmdAgent> amdAgents;
  std::vector<DeviceNode> amdNodes;   // /dev/kfd, /dev/dri/renderD*
  std::vector<std::string> problems;  // unreadable or malformed files, one line each

  nlohmann::json toJson() const;
  std::string toText() const;
  const DeviceNode* node(std::string_view path) const;
};

// Pure parsers, on file contents.
std::optional<NvidiaDriver> parseNvidiaVersion(std::string_view procDriverNvidiaVersion);
std::optional<NvidiaGpu> parseGpuInformation(std::string_view information);
std::map<std::string, int> parseProcDevices(std::string_view procDevices);  // character devices
std::vector<MigDevice> parseMigMinors(std::string_view migMinors);
std::map<std::string, uint64_t> parseKfdProperties(std::string_view properties);
std::string gfxName(uint64_t gfxTargetVersion);  // 90402 -> "gfx942"
// Compute capability and brand of a GPU model name, from a small table.
std::pair<std::string, std::string> inferArchAndBrand(std::string_view model);

// Whether `root` can serve as a host root: an existing, readable directory with a readable
// proc/ directory. A wrong --host-root must not read as "no NVIDIA driver".
Status checkHostRoot(const std::string& root);

// The facts of the host under `root` on disk ("/": this machine).
HostFacts readHostFacts(const std::string& root);
class HostFs;
// The same, through any HostFs (tests: a fixture tree whose device nodes are described in a file).
HostFacts readHostFacts(const HostFs& fs);

}  // namespace kernodeck::host
