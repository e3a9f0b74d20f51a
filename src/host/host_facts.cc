// Reads the host's GPU facts from files under a root. See host_facts.h.
#include "kernodeck/host/host_facts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <tuple>

#include "kernodeck/gpu/cuda_compat.h"
#include "kernodeck/host/host_fs.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::host {
namespace {

DeviceNode checkNode(const HostFs& fs, const std::string& path, int major, int minor) {
  DeviceNode n{path, major, minor, false, ""};
  NodeStat st = fs.lstat(path);
  if (!st.exists) {
    n.problem = "missing";
    return n;
  }
  n.present = true;
  if (!st.isChar) {
    n.problem = "not a character device";
  } else if (major >= 0 && (st.major != major || (minor >= 0 && st.minor != minor))) {
    n.problem = "is " + std::to_string(st.major) + ":" + std::to_string(st.minor) + ", expected " +
                std::to_string(major) + ":" + std::to_string(minor);
  }
  return n;
}

// Parses the number after `prefix` in a directory name such as "gpu0", "gi12" or "ci3".
std::optional<int> numberAfter(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  auto v = util::parseUint(name.substr(prefix.size()));
  if (!v || *v >= (1u << 20)) return std::nullopt;
  return static_cast<int>(*v);
}

// (gpu, gi, ci) of the MIG instances that exist; ci is -1 for a GPU instance's own capability.
std::set<std::tuple<int, int, int>> configuredMig(const HostFs& fs) {
  std::set<std::tuple<int, int, int>> out;
  std::string caps = "/proc/driver/nvidia/capabilities";
  auto exists = [&](const std::string& p) { return fs.lstat(p).exists; };
  for (const auto& gpuName : fs.list(caps)) {
    auto gpu = numberAfter(gpuName, "gpu");
    if (!gpu) continue;
    std::string migDir = caps + "/" + gpuName + "/mig";
    for (const auto& giName : fs.list(migDir)) {
      auto gi = numberAfter(giName, "gi");
      if (!gi) continue;
      std::string giDir = migDir + "/" + giName;
      if (exists(giDir + "/access")) out.insert({*gpu, *gi, -1});
      for (const auto& ciName : fs.list(giDir)) {
        auto ci = numberAfter(ciName, "ci");
        if (ci && exists(giDir + "/" + ciName + "/access")) out.insert({*gpu, *gi, *ci});
      }
    }
  }
  return out;
}

// The PCI device id, for a model the driver shows without a name; read only for a well-formed
// address, never a path a directory's name would make.
void readPciDevice(const HostFs& fs, NvidiaGpu& g) {
  if (!parsePciAddress(g.busLocation)) return;
  auto id = fs.read("/sys/bus/pci/devices/" + g.busLocation + "/device", 64);
  if (!id) return;
  std::string v(util::trim(*id));
  if (v.size() != 6 || !v.starts_with("0x")) return;
  g.pciDevice = v;
  if (g.arch.empty())
    if (auto n = std::strtoul(v.c_str() + 2, nullptr, 16); n > 0) g.arch = archForPciDevice(static_cast<uint32_t>(n));
}

// A Jetson (L4T): no nvidia.ko, an integrated GPU through nvgpu and CSV mounts. Detected so that
// "no NVIDIA driver" is never said of it (hook.host.jetson).
std::optional<TegraStack> readTegra(const HostFs& fs) {
  auto release = fs.read("/etc/nv_tegra_release", 4096);
  bool nvgpu = fs.lstat("/sys/module/nvgpu").exists;
  if (!release && !nvgpu) return std::nullopt;
  TegraStack t;
  if (release) t.release = parseTegraRelease(*release).value_or("");
  t.nvgpu = nvgpu;
  for (const auto& name : fs.list("/etc/nvidia-container-runtime/host-files-for-container.d"))
    if (name.ends_with(".csv")) t.csvs.push_back(name);
  return t;
}

}  // namespace

const DeviceNode* HostFacts::node(std::string_view path) const {
  for (const auto& n : nodes)
    if (n.path == path) return &n;
  for (const auto& n : amdNodes)
    if (n.path == path) return &n;
  return nullptr;
}

Status checkHostRoot(const std::string& root) {
  auto readableDir = [](const std::string& p) -> std::string {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return std::strerror(errno);
    if (!S_ISDIR(st.st_mode)) return "not a directory";
    if (::access(p.c_str(), R_OK | X_OK) != 0) return std::strerror(errno);
    return {};
  };
  std::string shown = util::printable(root, 200);
  if (std::string why = readableDir(root); !why.empty())
    return Error::Io("host root " + shown + " is unreadable: " + why);
  std::string proc = (root == "/" ? "" : root) + "/proc";
  if (std::string why = readableDir(proc); !why.empty())
    return Error::Io("host root " + shown + " has no readable proc/ directory (" + why + ")");
  return {};
}

HostFacts readHostFacts(const std::string& root) { return readHostFacts(*diskHostFs(root)); }

HostFacts readHostFacts(const HostFs& fs) {
  HostFacts h;
  h.root = fs.root();
  auto readSmall = [&](const std::string& path, size_t limit = 1 << 20) { return fs.read(path, limit); };

  auto devices = parseProcDevices(readSmall("/proc/devices").value_or(""));
  if (auto v = readSmall("/proc/driver/nvidia/version")) {
    h.nvidia = parseNvidiaVersion(*v);
    if (!h.nvidia) h.problems.push_back("/proc/driver/nvidia/version is not in a known format");
  }
  if (auto v = readSmall("/sys/module/nvidia/version", 256)) h.sysModuleVersion = std::string(util::trim(*v));
  if (!h.nvidia && !h.sysModuleVersion.empty()) h.nvidia = NvidiaDriver{h.sysModuleVersion, false};
  if (h.nvidia && !h.sysModuleVersion.empty() && h.sysModuleVersion != h.nvidia->version)
    h.problems.push_back("driver version differs between /proc (" + h.nvidia->version + ") and /sys (" +
                         h.sysModuleVersion + "): a reload is pending");

  if (h.nvidia) {
    h.maxCuda = gpu::maxCudaForDriver(h.nvidia->version);
    for (const auto& bus : fs.list("/proc/driver/nvidia/gpus")) {
      auto info = readSmall("/proc/driver/nvidia/gpus/" + bus + "/information", 65536);
      if (!info) continue;
      auto g = parseGpuInformation(*info);
      if (!g) {
        h.problems.push_back("/proc/driver/nvidia/gpus/" + util::printable(bus) +
                             "/information is not in a known format");
        continue;
      }
      if (g->busLocation.empty()) g->busLocation = bus;
      readPciDevice(fs, *g);
      h.gpus.push_back(*g);
    }
    int nvMajor = devices.count("nvidia-frontend") ? devices["nvidia-frontend"]
                  : devices.count("nvidia")        ? devices["nvidia"]
                                                   : 195;
    h.nodes.push_back(checkNode(fs, "/dev/nvidiactl", nvMajor, 255));
    for (const auto& g : h.gpus)
      if (g.minor >= 0) h.nodes.push_back(checkNode(fs, "/dev/nvidia" + std::to_string(g.minor), nvMajor, g.minor));
    int uvm = devices.count("nvidia-uvm") ? devices["nvidia-uvm"] : -1;
    h.nodes.push_back(checkNode(fs, "/dev/nvidia-uvm", uvm, 0));
    h.nodes.push_back(checkNode(fs, "/dev/nvidia-uvm-tools", uvm, 1));
    // nvidia-modeset exists only where the nvidia-modeset module is loaded (display, not compute).
    if (DeviceNode modeset = checkNode(fs, "/dev/nvidia-modeset", nvMajor, 254); modeset.present)
      h.nodes.push_back(modeset);
    if (auto mm = readSmall("/proc/driver/nvidia-caps/mig-minors")) {
      // mig-minors lists every capability the driver could create; the instances that exist
      // have a capability file under /proc/driver/nvidia/capabilities/gpuN/mig/giG[/ciC]/access.
      std::set<std::tuple<int, int, int>> configured = configuredMig(fs);
      for (const MigDevice& d : parseMigMinors(*mm))
        if (configured.count({d.gpu, d.gi, d.ci})) h.mig.push_back(d);
      int caps = devices.count("nvidia-caps") ? devices["nvidia-caps"] : -1;
      for (const auto& name : fs.list("/dev/nvidia-caps")) {
        DeviceNode n = checkNode(fs, "/dev/nvidia-caps/" + name, caps, -1);
        h.nodes.push_back(n);
      }
    }
    // IMEX channels (multi-node NVLink), /dev/nvidia-caps-imex-channels/channelN, minor N.
    int imex = devices.count("nvidia-caps-imex-channels") ? devices["nvidia-caps-imex-channels"] : -1;
    for (const auto& name : fs.list("/dev/nvidia-caps-imex-channels"))
      if (auto n = name.starts_with("channel") ? util::parseUint(name.substr(7)) : std::nullopt; n && *n < 2048)
        h.nodes.push_back(checkNode(fs, "/dev/nvidia-caps-imex-channels/" + name, imex, static_cast<int>(*n)));
    for (const auto& n : h.nodes) {
      if (!n.present || !n.problem.empty() || n.major < 0) continue;
      NodeStat st = fs.lstat(n.path);
      if (!st.isChar) continue;
      std::string link = "/dev/char/" + std::to_string(st.major) + ":" + std::to_string(st.minor);
      if (!fs.lstat(link).exists) h.devCharMissing.push_back(link);
    }
  }

  if (!h.nvidia) h.tegra = readTegra(fs);

  if (auto v = readSmall("/sys/module/amdgpu/version", 256)) h.amdgpuVersion = std::string(util::trim(*v));
  std::string topo = "/sys/class/kfd/kfd/topology/nodes";
  for (const auto& id : fs.list(topo)) {
    auto props = readSmall(topo + "/" + id + "/properties", 65536);
    if (!props) continue;
    auto kv = parseKfdProperties(*props);
    if (!kv.count("gfx_target_version") || kv["gfx_target_version"] == 0) continue;  // a CPU agent
    AmdAgent a;
    a.node = util::parseUint(id).has_value() ? static_cast<int>(*util::parseUint(id)) : -1;
    a.gfx = gfxName(kv["gfx_target_version"]);
    a.renderMinor = kv.count("drm_render_minor") ? static_cast<int>(kv["drm_render_minor"]) : -1;
    h.amdAgents.push_back(a);
  }
  h.amdDriver = !h.amdAgents.empty() || !h.amdgpuVersion.empty() || devices.count("kfd");
  if (h.amdDriver) {
    h.amdNodes.push_back(checkNode(fs, "/dev/kfd", devices.count("kfd") ? devices["kfd"] : -1, -1));
    for (const auto& a : h.amdAgents)
      if (a.renderMinor >= 0)
        h.amdNodes.push_back(checkNode(fs, "/dev/dri/renderD" + std::to_string(a.renderMinor), 226, a.renderMinor));
  }
  return h;
}

nlohmann::json HostFacts::toJson() const {
  using nlohmann::json;
  json j;
  j["root"] = root;
  json nv = nullptr;
  if (nvidia) {
    nv = {{"driver_version", nvidia->version},
          {"kernel_module", nvidia->openModule ? "open" : "proprietary"},
          {"max_cuda", maxCuda}};
    json gs = json::array();
    for (const auto& g : gpus)
      gs.push_back({{"model", g.model},
                    {"uuid", g.uuid},
                    {"bus_location", g.busLocation},
                    {"minor", g.minor},
                    {"excluded", g.excluded},
                    {"arch", g.arch},
                    {"brand", g.brand},
                    {"pci_device", g.pciDevice}});
    nv["gpus"] = gs;
    json ns = json::array();
    for (const auto& n : nodes)
      ns.push_back({{"path", n.path},
                    {"present", n.present},
                    {"major", n.major},
                    {"minor", n.minor},
                    {"problem", n.problem.empty() ? json(nullptr) : json(n.problem)}});
    nv["device_nodes"] = ns;
    json ms = json::array();
    for (const auto& m : mig) ms.push_back({{"gpu", m.gpu}, {"gi", m.gi}, {"ci", m.ci}, {"minor", m.minor}});
    nv["mig"] = ms;
    nv["dev_char_missing"] = devCharMissing;
  }
  j["nvidia"] = nv;
  json amd = nullptr;
  if (amdDriver) {
    amd = {{"amdgpu_version", amdgpuVersion}};
    json as = json::array();
    for (const auto& a : amdAgents) as.push_back({{"node", a.node}, {"gfx", a.gfx}, {"render_minor", a.renderMinor}});
    amd["agents"] = as;
    json ns = json::array();
    for (const auto& n : amdNodes)
      ns.push_back(
          {{"path", n.path}, {"present", n.present}, {"problem", n.problem.empty() ? json(nullptr) : json(n.problem)}});
    amd["device_nodes"] = ns;
  }
  j["amd"] = amd;
  if (tegra)
    j["tegra"] = {{"release", tegra->release}, {"nvgpu", tegra->nvgpu}, {"csv_files", tegra->csvs}};
  else
    j["tegra"] = nullptr;
  j["problems"] = problems;
  return j;
}

std::string HostFacts::toText() const {
  std::ostringstream o;
  o << "host root " << root << "\n";
  if (!nvidia)
    o << "NVIDIA: no driver loaded\n";
  else {
    o << "NVIDIA driver " << nvidia->version << " (" << (nvidia->openModule ? "open" : "proprietary")
      << " kernel module), CUDA up to " << (maxCuda.empty() ? "?" : maxCuda) << "\n";
    for (const auto& g : gpus)
      o << "  GPU " << g.minor << ": " << g.model << "  " << g.uuid << "  " << g.busLocation
        << (g.arch.empty() ? "" : "  sm " + g.arch) << (g.excluded ? "  (excluded)" : "") << "\n";
    for (const auto& n : nodes)
      o << "  " << (n.problem.empty() ? "ok     " : "PROBLEM") << " " << n.path
        << (n.problem.empty() ? "" : ": " + n.problem) << "\n";
    if (!mig.empty()) o << "  MIG: " << mig.size() << " access capabilities\n";
    for (const auto& l : devCharMissing)
      o << "  missing link " << l << " (cgroup device rules may break after a daemon-reload)\n";
  }
  if (amdDriver) {
    o << "AMD amdgpu " << (amdgpuVersion.empty() ? "?" : amdgpuVersion) << "\n";
    for (const auto& a : amdAgents) o << "  agent " << a.node << ": " << a.gfx << " renderD" << a.renderMinor << "\n";
    for (const auto& n : amdNodes)
      o << "  " << (n.problem.empty() ? "ok     " : "PROBLEM") << " " << n.path
        << (n.problem.empty() ? "" : ": " + n.problem) << "\n";
  }
  if (tegra)
    o << "NVIDIA Jetson (L4T " << (tegra->release.empty() ? "?" : tegra->release) << (tegra->nvgpu ? ", nvgpu" : "")
      << "): an integrated GPU through CSV mounts, not checked by Kernodeck\n";
  if (!nvidia && !amdDriver && !tegra) o << "no GPU driver: a CPU-only node\n";
  for (const auto& p : problems) o << "problem: " << p << "\n";
  return o.str();
}

}  // namespace kernodeck::host
