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
  std::string arch;       // compute capability inferred from the model ("9.0"), else from pciDevice; empty if unknown
  std::string brand;      // inferred ("tesla", "geforce", "quadro", "nvidia"), empty if unknown
  std::string pciDevice;  // /sys/bus/pci/devices/<bus location>/device ("0x2342"), empty if unread
};

// A PCI address as Linux writes it, DOMAIN:BUS:DEVICE.FUNCTION in hex ("0000:18:00.0"; Grace
// systems put their GPUs in other domains: "0009:01:00.0"; VMD domains have 5 digits).
struct PciAddress {
  uint32_t domain = 0;
  unsigned bus = 0, device = 0, function = 0;
};

// An NVIDIA Jetson (L4T): an integrated GPU served by the nvgpu module and CSV mounts, with no
// nvidia.ko and no /proc/driver/nvidia. Kernodeck does not check that stack; it says so.
struct TegraStack {
  std::string release;            // "R36.3.0" from /etc/nv_tegra_release, empty if unread
  bool nvgpu = false;             // /sys/module/nvgpu exists
  std::vector<std::string> csvs;  // /etc/nvidia-container-runtime/host-files-for-container.d/*.csv
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
  std::optional<TegraStack> tegra;    // a Jetson (L4T), detected; nothing of it is checked
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
// Compute capability and brand of a GPU model name (gpu::capabilityForModel's table: Volta to
// Blackwell, data-centre and workstation GPUs).
std::pair<std::string, std::string> inferArchAndBrand(std::string_view model);
// Compute capability of an NVIDIA PCI device id (0x2342: GH200, "9.0"; gpu::gpuForPciDevice's
// table), for models whose name the driver does not know yet ("NVIDIA Graphics Device"); empty if
// not in the table.
std::string archForPciDevice(uint32_t device);
// "0009:01:00.0" -> {9, 1, 0, 0}; nullopt for anything else (a path, spaces, a missing part).
std::optional<PciAddress> parsePciAddress(std::string_view text);
// /etc/nv_tegra_release's first line ("# R36 (release), REVISION: 3.0, ...") -> "R36.3.0".
std::optional<std::string> parseTegraRelease(std::string_view text);

// Whether `root` can serve as a host root: an existing, readable directory with a readable
// proc/ directory. A wrong --host-root must not read as "no NVIDIA driver".
Status checkHostRoot(const std::string& root);

// The facts of the host under `root` on disk ("/": this machine).
HostFacts readHostFacts(const std::string& root);
class HostFs;
// The same, through any HostFs (tests: a fixture tree whose device nodes are described in a file).
HostFacts readHostFacts(const HostFs& fs);

}  // namespace kernodeck::host
