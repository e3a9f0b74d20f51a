// See container_check.h. Every finding names the mismatch and a plain fix.
#include "kernodeck/hook/container_check.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>

#include "kernodeck/gpu/cuda_compat.h"
#include "kernodeck/gpu/gpu_code_judge.h"
#include "kernodeck/gpu/gpu_models.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::hook {

using namespace gpu;  // the rules this check applies
using report::Finding;
using report::Severity;

bool ContainerCheck::blocking() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::Error; });
}

std::map<std::string, uint32_t> parseGroupFile(std::string_view text) {
  std::map<std::string, uint32_t> out;
  for (const auto& line : util::split(text, '\n')) {
    auto f = util::split(line, ':');
    if (f.size() < 3) continue;
    auto gid = util::parseUint(f[2]);
    if (gid && *gid <= UINT32_MAX) out[f[0]] = static_cast<uint32_t>(*gid);
  }
  return out;
}

namespace {

bool isGpuNode(std::string_view p) {
  constexpr std::string_view kPrefix = "/dev/nvidia";
  if (p.size() <= kPrefix.size() || p.substr(0, kPrefix.size()) != kPrefix) return false;
  return std::all_of(p.begin() + kPrefix.size(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
}

class Checker {
 public:
  Checker(const host::HostFacts& h, const oci::ContainerSpec& s, const std::optional<Expectation>& e,
          const std::map<std::string, uint32_t>& groups)
      : host_(h), spec_(s), expect_(e), groups_(groups) {}

  ContainerCheck run() {
    auto envOf = [&](const char* k) -> std::optional<std::string> {
      auto it = spec_.env.find(k);
      return it == spec_.env.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    visible_ = parseVisibleDevices(envOf("NVIDIA_VISIBLE_DEVICES"));
    // The toolkit gives a legacy CUDA image (CUDA_VERSION, no NVIDIA_REQUIRE_CUDA) every GPU.
    legacyAll_ = visible_.kind == VisibleDevices::Unset && isLegacyCudaImage(spec_.env);
    if (legacyAll_) visible_.kind = VisibleDevices::All;
    bool nvDevices = false, amdDevices = false;
    for (const auto& d : spec_.devices) {
      if (d.path.rfind("/dev/nvidia", 0) == 0) {
        nvDevices = true;
        out_.passedNodes.push_back(d.path);
      }
      if (d.path == "/dev/kfd" || d.path.rfind("/dev/dri/renderD", 0) == 0) {
        amdDevices = true;
        out_.passedNodes.push_back(d.path);
      }
    }
    std::string acc = expect_ ? expect_->accelerator : "";
    bool wantsNvidia = visible_.requestsGpus() || nvDevices || acc == "cuda";
    bool wantsAmd = amdDevices || acc == "rocm";
    out_.gpuContainer = wantsNvidia || wantsAmd;
    if (wantsNvidia) {
      out_.vendor = "nvidia";
      checkNvidia(nvDevices);
    } else if (wantsAmd) {
      out_.vendor = "amd";
      checkAmd();
    }
    return std::move(out_);
  }

 private:
  void add(const char* code, Severity sev, std::string msg, std::map<std::string, std::string> ev = {}) {
    out_.findings.push_back(Finding{code, sev, std::move(msg), std::move(ev)});
  }

  void checkNvidia(bool nvDevices) {
    if (!host_.nvidia && host_.tegra) {
      // A Jetson: its GPU is served by nvgpu and CSV mounts, a stack Kernodeck does not check.
      // Neither "no driver" (it works) nor a pass: a warning that names it, and no verdict.
      add("hook.host.jetson", Severity::Warning,
          "this node is an NVIDIA Jetson (L4T " + (host_.tegra->release.empty() ? "?" : host_.tegra->release) +
              "): its integrated GPU comes through nvgpu and CSV mounts, which Kernodeck does not check; the "
              "container's GPU requirements are not judged here",
          {{"release", host_.tegra->release}});
      return;
    }
    if (!host_.nvidia) {
      add("hook.driver.absent", Severity::Error,
          "the container asks for an NVIDIA GPU but this node has no NVIDIA driver loaded; schedule it on a GPU node");
      return;
    }
    const std::string& driver = host_.nvidia->version;
    int hostGpus = 0;
    for (const auto& g : host_.gpus) hostGpus += g.excluded ? 0 : 1;
    if (visible_.kind == VisibleDevices::All)
      out_.requestedGpus = -1;
    else if (visible_.kind == VisibleDevices::List)
      out_.requestedGpus = static_cast<int>(visible_.ids.size());

    // Requirements from the environment, as the NVIDIA toolkit reads them, and from the expectation
    // (named after it in messages), unless the same text is already in the environment.
    ContainerRequirements reqs = requirementsFromEnv(spec_.env);
    if (expect_)
      for (size_t i = 0; i < expect_->nvidiaRequire.size(); ++i) {
        const std::string& text = expect_->nvidiaRequire[i];
        bool dup = std::any_of(spec_.env.begin(), spec_.env.end(), [&](const auto& kv) {
          return kv.first.starts_with("NVIDIA_REQUIRE_") && kv.second == text;
        });
        if (dup) continue;
        std::string source = "the expectation's nvidia.require[" + std::to_string(i) + "]";
        auto r = parseRequirement(text);
        if (!r.ok()) {
          reqs.errors.push_back(source + ": " + r.error().message);
          continue;
        }
        r->source = source;
        reqs.requirements.push_back(*r);
      }
    for (const auto& i : reqs.ignored) add("hook.require.disable_ignored", Severity::Warning, i);
    if (reqs.disabled) {
      add("hook.require.disabled", Severity::Info,
          "NVIDIA_DISABLE_REQUIRE is set: the NVIDIA toolkit skips its checks; Kernodeck still checks the CUDA build");
    } else {
      for (const auto& e : reqs.errors) add("hook.require.invalid", Severity::Warning, "cannot parse " + e);
      std::vector<Properties> props = visibleGpuProperties(driver);
      for (const auto& r : reqs.requirements) checkRequirement(r, driver, props);
    }
    if (expect_ && !expect_->torchCuda.empty()) {
      CudaVerdict v = checkCuda(driver, expect_->torchCuda, expect_->compatDriverBranches);
      std::map<std::string, std::string> ev = {{"driver", driver}, {"cuda", expect_->torchCuda}};
      if (v.support == CudaSupport::Unsupported)
        add("hook.cuda.unsupported", Severity::Error,
            "torch " + expect_->torchVersion + " is built for CUDA " + expect_->torchCuda + " but " + v.explanation +
                "; upgrade the node's driver or use a torch build for CUDA " +
                (host_.maxCuda.empty() ? "<= the driver's" : host_.maxCuda),
            ev);
      else if (v.support != CudaSupport::Native)
        add("hook.cuda.compat", Severity::Info, v.explanation, ev);
    }
    if (expect_) checkArchitectures();
    checkNvidiaNodes(nvDevices, hostGpus);
    checkImex(nvDevices);
    for (const auto& l : host_.devCharMissing)
      add("host.devchar.missing", Severity::Warning,
          "host link " + l +
              " is missing: after a systemd daemon-reload the container can lose GPU access "
              "(\"Failed to initialize NVML: Unknown Error\"); run nvidia-ctk system create-dev-char-symlinks");
  }

  // The expectation's GPU code against the GPUs passed in (all of them when the spec names no GPU
  // node): every library of its gpu_code (gpu/gpu_code_judge.h), once per compute capability;
  // else, from an expectation without gpu_code, torch's arch_list.
  void checkArchitectures() {
    bool anyGpu = std::any_of(spec_.devices.begin(), spec_.devices.end(),
                              [](const oci::LinuxDevice& d) { return isGpuNode(d.path); });
    std::map<std::string, std::vector<const host::NvidiaGpu*>> byArch;  // capability -> GPUs
    for (const auto& g : host_.gpus) {
      bool passed = std::any_of(spec_.devices.begin(), spec_.devices.end(), [&](const oci::LinuxDevice& d) {
        return d.path == "/dev/nvidia" + std::to_string(g.minor);
      });
      if (g.excluded || (anyGpu && !passed)) continue;
      if (!expect_->gpuCode.empty()) {
        if (!g.arch.empty()) byArch[g.arch].push_back(&g);
        continue;
      }
      if (archRunsOn(expect_->torchArchList, g.arch) != false) continue;
      std::string sm = smName(g.arch);
      add("hook.arch.unsupported", Severity::Error,
          g.model + " (" + g.busLocation + ") is " + sm + " but torch " + expect_->torchVersion + " was built for " +
              util::join(expect_->torchArchList, ", ") +
              ": kernels would fail with \"no kernel image is available\"; use a torch build that includes " + sm,
          {{"arch", sm}});
    }
    for (const auto& [arch, gpus] : byArch) {
      std::vector<std::string> names;
      for (const auto* g : gpus) {
        // A driver older than the GPU calls it "NVIDIA Graphics Device": the model its PCI id names.
        auto id = static_cast<uint32_t>(std::strtoul(g->pciDevice.c_str(), nullptr, 16));
        std::string known = g->pciDevice.empty() ? "" : gpuForPciDevice(id).model;
        bool add = !known.empty() && g->model.find(known) == std::string::npos;
        names.push_back(g->model + (add ? " [" + known + "]" : "") + " (" + g->busLocation + ")");
      }
      std::string who = util::join(names, ", ") + ", compute capability " + arch;
      for (const auto& v : judgeGpuCode(expect_->gpuCode, arch)) {
        if (v.fit != CodeFit::None && v.fit != CodeFit::Ptx) continue;
        std::map<std::string, std::string> ev = {{"arch", smName(arch)}, {"library", v.library}};
        if (v.fit == CodeFit::None)
          add("hook.arch.unsupported", Severity::Error, explainVerdict(v, who, arch), ev);
        else
          add("hook.arch.ptx_only", Severity::Warning, explainVerdict(v, who, arch), ev);
      }
    }
  }

  // Requirements are checked per visible GPU, as libnvidia-container does (a MIG device by its
  // parent GPU): the GPUs whose /dev/nvidiaN the spec passes, else those NVIDIA_VISIBLE_DEVICES
  // names (index, GPU-UUID, GPU:MIG), else every GPU for "all". When no GPU can be told (a
  // MIG-UUID, an injected device list), cuda and driver are still checked and arch and brand
  // are undecidable; the toolkit would check nothing then.
  std::vector<Properties> visibleGpuProperties(const std::string& driver) const {
    std::vector<const host::NvidiaGpu*> gpus;
    auto addGpu = [&](const host::NvidiaGpu* g) {
      if (g && !g->excluded && std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
    };
    for (const auto& d : spec_.devices)
      if (isGpuNode(d.path))
        for (const auto& g : host_.gpus)
          if (d.path == "/dev/nvidia" + std::to_string(g.minor)) addGpu(&g);
    if (gpus.empty() && visible_.kind == VisibleDevices::All)
      for (const auto& g : host_.gpus) addGpu(&g);
    if (gpus.empty() && visible_.kind == VisibleDevices::List)
      for (const auto& id : visible_.ids) {
        std::string parent = id.substr(0, id.find(':'));  // "0:1" is MIG instance 1 of GPU 0
        if (auto idx = util::parseUint(parent); idx && *idx < host_.gpus.size()) addGpu(&host_.gpus[*idx]);
        for (const auto& g : host_.gpus)
          if (!g.uuid.empty() && g.uuid == id) addGpu(&g);
      }
    std::vector<Properties> props;
    for (const auto* g : gpus) props.push_back(Properties{host_.maxCuda, driver, g->arch, g->brand});
    if (props.empty()) props.push_back(Properties{host_.maxCuda, driver, "", ""});
    return props;
  }

  void checkRequirement(const Requirement& r, const std::string& driver, const std::vector<Properties>& props) {
    for (const auto& p : props) {
      std::string why;
      std::vector<Condition> failed;
      Tri t = evaluate(r, p, &why, &failed);
      if (t == Tri::False) {
        // The fix depends on what failed: a driver too old, or a GPU of another kind.
        bool driverSide = std::any_of(failed.begin(), failed.end(), [](const Condition& c) {
          return c.property == "cuda" || c.property == "driver";
        });
        std::string gpu = (p.arch.empty() ? "" : "arch " + p.arch) +
                          (p.brand.empty() ? "" : std::string(p.arch.empty() ? "" : ", ") + "brand " + p.brand);
        std::string fix = driverSide
                              ? "update the driver or use an image built for an older CUDA"
                              : "run it on a GPU that meets it (this one is " +
                                    (gpu.empty() ? std::string("of unknown kind") : gpu) + ") or relax the requirement";
        add("hook.require.unsatisfied", Severity::Error,
            r.source + " '" + r.text + "' is not met by driver " + driver + " (CUDA " + host_.maxCuda + ")" +
                (gpu.empty() ? "" : ", " + gpu) + ": " + why + "; " + fix,
            {{"requirement", r.text}, {"source", r.source}, {"driver", driver}});
        return;
      }
      if (t == Tri::Unknown) {
        add("hook.require.undecidable", Severity::Info,
            r.source + " '" + r.text + "' " + why + " (GPU arch or brand); not enforced", {{"requirement", r.text}});
        return;
      }
    }
  }

  void checkNvidiaNodes(bool nvDevices, int hostGpus) {
    // Nodes the host lacks break every GPU container, whoever injects them.
    for (const char* p : {"/dev/nvidiactl", "/dev/nvidia-uvm"}) {
      const host::DeviceNode* n = host_.node(p);
      if (n && !n->problem.empty())
        add("hook.host.node", Severity::Error,
            std::string("host device ") + p + " is " + n->problem +
                (std::string(p) == "/dev/nvidia-uvm"
                     ? "; load nvidia-uvm (modprobe nvidia-uvm, or nvidia-modprobe -u -c=0)"
                     : "; check the driver installation"),
            {{"path", p}});
    }
    if (!nvDevices) {
      bool nvidiaHook = std::any_of(spec_.hookPaths.begin(), spec_.hookPaths.end(), [](const std::string& h) {
        return h.find("nvidia-container-runtime-hook") != std::string::npos ||
               h.find("nvidia-container-toolkit") != std::string::npos || h.find("nvidia-ctk") != std::string::npos;
      });
      // Say why the container counts as a GPU container: the fix differs.
      std::string asks = legacyAll_ ? "the image is a legacy CUDA image (CUDA_VERSION without NVIDIA_REQUIRE_CUDA), "
                                      "which the NVIDIA toolkit gives every GPU,"
                         : visible_.requestsGpus()
                             ? "NVIDIA_VISIBLE_DEVICES asks for GPUs"
                             : "the image's expectation says it needs CUDA, NVIDIA_VISIBLE_DEVICES is not set,";
      if (nvidiaHook)
        add("hook.device.injected", Severity::Info,
            "GPU devices are injected by the NVIDIA runtime hook, not listed in the spec");
      else
        add("hook.device.missing", Severity::Error,
            asks +
                " but the spec passes no NVIDIA device and no NVIDIA hook will inject one: "
                "the container would see no GPU; run it with the NVIDIA runtime, CDI devices (--device "
                "nvidia.com/gpu=...) or the device plugin");
      return;
    }
    auto passed = [&](const std::string& p) {
      return std::find(out_.passedNodes.begin(), out_.passedNodes.end(), p) != out_.passedNodes.end();
    };
    for (const char* p : {"/dev/nvidiactl", "/dev/nvidia-uvm"})
      if (!passed(p))
        add("hook.device.missing", Severity::Error,
            std::string(p) +
                " is not passed into the container; CUDA cannot start without it (add it to the device list)",
            {{"path", p}});
    int gpuNodes = static_cast<int>(std::count_if(out_.passedNodes.begin(), out_.passedNodes.end(), isGpuNode));
    int want = out_.requestedGpus == -1 ? hostGpus : out_.requestedGpus;
    if (visible_.requestsMig()) {
      bool caps = std::any_of(out_.passedNodes.begin(), out_.passedNodes.end(),
                              [](const std::string& p) { return p.rfind("/dev/nvidia-caps/", 0) == 0; });
      if (!caps)
        add("hook.device.missing", Severity::Error,
            "MIG devices are requested but no /dev/nvidia-caps/* node is passed: the MIG instance is not reachable",
            {});
      want = std::max(1, gpuNodes);  // several MIG instances may share one GPU node
    }
    checkMigCaps();
    if (gpuNodes < want)
      add("hook.device.missing", Severity::Error,
          std::to_string(want) + " GPU(s) requested but " + std::to_string(gpuNodes) + " /dev/nvidiaN node(s) passed",
          {});
    for (const auto& d : spec_.devices) {
      const host::DeviceNode* n = host_.node(d.path);
      if (!n) {
        if (isGpuNode(d.path))
          add("hook.device.unknown", Severity::Error, d.path + " is passed but the host has no such GPU",
              {{"path", d.path}});
        continue;
      }
      if (n->major >= 0 && d.major >= 0 && (d.major != n->major || (n->minor >= 0 && d.minor != n->minor)))
        add("hook.device.mismatch", Severity::Warning,
            d.path + " is passed as " + std::to_string(d.major) + ":" + std::to_string(d.minor) +
                " but the host's is " + std::to_string(n->major) + ":" + std::to_string(n->minor),
            {{"path", d.path}});
    }
  }

  bool passedNode(const std::string& p) const {
    return std::find(out_.passedNodes.begin(), out_.passedNodes.end(), p) != out_.passedNodes.end();
  }

  // The MIG capability nodes of the MIG devices passed (what NVIDIA's validator does not check):
  // a compute instance's access node needs its GPU instance's and its GPU's node, a GPU
  // instance's needs one of its compute instances'. Each missing node is a finding naming it;
  // a capability node the host does not have is hook.device.unknown.
  void checkMigCaps() {
    auto cap = [](int minor) { return "/dev/nvidia-caps/nvidia-cap" + std::to_string(minor); };
    auto name = [](const host::MigDevice& m) {
      return "gpu" + std::to_string(m.gpu) + "/gi" + std::to_string(m.gi) +
             (m.ci >= 0 ? "/ci" + std::to_string(m.ci) : std::string()) + " access";
    };
    std::set<std::string> named;
    auto missing = [&](const std::string& path, const std::string& why) {
      if (named.insert(path).second)
        add("hook.device.missing", Severity::Error,
            path + " is not passed into the container, " + why +
                ": the MIG device cannot be opened (pass it, as the NVIDIA toolkit does)",
            {{"path", path}});
    };
    for (const auto& m : host_.mig) {
      if (!passedNode(cap(m.minor))) continue;
      if (!passedNode("/dev/nvidia" + std::to_string(m.gpu)))
        missing("/dev/nvidia" + std::to_string(m.gpu), "the parent GPU of the MIG capability " + cap(m.minor));
      if (m.ci >= 0) {
        for (const auto& g : host_.mig)
          if (g.gpu == m.gpu && g.gi == m.gi && g.ci == -1 && !passedNode(cap(g.minor)))
            missing(cap(g.minor),
                    "the " + name(g) + " capability of the compute instance whose " + cap(m.minor) + " is passed");
      } else {
        const host::MigDevice* firstCi = nullptr;
        bool anyCi = false;
        for (const auto& c : host_.mig)
          if (c.gpu == m.gpu && c.gi == m.gi && c.ci >= 0) {
            if (!firstCi) firstCi = &c;
            anyCi = anyCi || passedNode(cap(c.minor));
          }
        if (firstCi && !anyCi)
          missing(cap(firstCi->minor), "the " + name(*firstCi) +
                                           " capability (or another compute instance's) of "
                                           "the GPU instance whose " +
                                           cap(m.minor) + " is passed");
      }
    }
    for (const auto& p : out_.passedNodes)
      if (p.starts_with("/dev/nvidia-caps/") && !host_.node(p))
        add("hook.device.unknown", Severity::Error, p + " is passed but the host has no such MIG capability node",
            {{"path", p}});
  }

  // IMEX channels (multi-node NVLink) asked for by NVIDIA_IMEX_CHANNELS ("0,1", "all"): each
  // must exist on the host and, when the spec lists the devices, be passed.
  void checkImex(bool nvDevices) {
    auto it = spec_.env.find("NVIDIA_IMEX_CHANNELS");
    if (it == spec_.env.end()) return;
    std::string value(util::trim(it->second));
    if (value.empty() || value == "none" || value == "void") return;
    const std::string dir = "/dev/nvidia-caps-imex-channels";
    std::vector<std::string> want;
    if (value == "all") {
      for (const auto& n : host_.nodes)
        if (n.path.starts_with(dir + "/") && n.present) want.push_back(n.path);
      if (want.empty())
        add("hook.imex.channel_missing", Severity::Error,
            "NVIDIA_IMEX_CHANNELS=all but the host has no " + dir +
                "/channel* node: no IMEX channel would reach the container; create one (the driver's "
                "NVreg_CreateImexChannel0=1, or nvidia-modprobe -i 0)",
            {{"path", dir}});
    } else {
      for (const auto& id : util::split(value, ',')) {
        auto n = util::parseUint(util::trim(id));
        if (!n || *n > 2047) {
          add("hook.imex.invalid", Severity::Warning,
              "NVIDIA_IMEX_CHANNELS holds '" + util::printable(id, 20) + "', not a channel number, all or none");
          continue;
        }
        want.push_back(dir + "/channel" + std::to_string(*n));
      }
    }
    for (const auto& path : want) {
      const host::DeviceNode* n = host_.node(path);
      if (!n || !n->present || !n->problem.empty())
        add("hook.imex.channel_missing", Severity::Error,
            "NVIDIA_IMEX_CHANNELS asks for " + path + " but the host's node " +
                (!n                              ? std::string("does not exist")
                 : n->problem.starts_with("is ") ? n->problem
                                                 : "is " + n->problem) +
                ": create the channel (nvidia-modprobe -i N) or drop it from NVIDIA_IMEX_CHANNELS",
            {{"path", path}});
      else if (nvDevices && !passedNode(path))
        add("hook.device.missing", Severity::Error,
            path +
                " is not passed into the container though NVIDIA_IMEX_CHANNELS asks for it; add it to the "
                "device list",
            {{"path", path}});
    }
  }

  void checkAmd() {
    if (!host_.amdDriver) {
      add("hook.driver.absent", Severity::Error,
          "the container asks for an AMD GPU but this node has no amdgpu/KFD driver; schedule it on a ROCm node");
      return;
    }
    auto passed = [&](const std::string& p) {
      return std::find(out_.passedNodes.begin(), out_.passedNodes.end(), p) != out_.passedNodes.end();
    };
    if (!passed("/dev/kfd"))
      add("hook.device.missing", Severity::Error,
          "/dev/kfd is not passed into the container; ROCm cannot start without it", {{"path", "/dev/kfd"}});
    bool render = std::any_of(out_.passedNodes.begin(), out_.passedNodes.end(),
                              [](const std::string& p) { return p.rfind("/dev/dri/renderD", 0) == 0; });
    if (!render)
      add("hook.device.missing", Severity::Error, "no /dev/dri/renderD* node is passed: ROCm will see no GPU", {});
    for (const auto& n : host_.amdNodes)
      if (!n.problem.empty())
        add("hook.host.node", Severity::Error, "host device " + n.path + " is " + n.problem, {{"path", n.path}});
    std::vector<std::string> missingGroups;
    for (const char* g : {"render", "video"}) {
      auto it = groups_.find(g);
      if (it == groups_.end()) continue;
      if (std::find(spec_.additionalGids.begin(), spec_.additionalGids.end(), it->second) == spec_.additionalGids.end())
        missingGroups.push_back(std::string(g) + " (" + std::to_string(it->second) + ")");
    }
    if (!missingGroups.empty())
      add("hook.amd.groups", Severity::Warning,
          "the process is not in group(s) " + util::join(missingGroups, ", ") +
              ": the render nodes may not open (add them to process.user.additionalGids / supplementalGroups)");
  }

  const host::HostFacts& host_;
  const oci::ContainerSpec& spec_;
  const std::optional<Expectation>& expect_;
  const std::map<std::string, uint32_t>& groups_;
  VisibleDevices visible_;
  bool legacyAll_ = false;  // NVIDIA_VISIBLE_DEVICES unset on a legacy CUDA image: all GPUs
  ContainerCheck out_;
};

}  // namespace

ContainerCheck checkContainer(const host::HostFacts& host, const oci::ContainerSpec& spec,
                              const std::optional<Expectation>& expect,
                              const std::map<std::string, uint32_t>& hostGroups) {
  return Checker(host, spec, expect, hostGroups).run();
}

}  // namespace kernodeck::hook
