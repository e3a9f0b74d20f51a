// The probe's steps. LibTorch is reached only through compute.h.
#include "kernodeck/probe/probe.h"

#include <dlfcn.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <regex>
#include <set>

#include "kernodeck/gpu/cuda_build.h"
#include "kernodeck/gpu/cuda_compat.h"
#include "kernodeck/gpu/gpu_code_judge.h"
#include "kernodeck/gpu/requirement.h"
#include "kernodeck/host/host_facts.h"
#include "kernodeck/host/host_fs.h"
#include "kernodeck/host/host_record.h"
#include "kernodeck/libtorch/plugin.h"
#include "kernodeck/oci/fs_view.h"
#include "kernodeck/os/image_cuda.h"
#include "kernodeck/os/os_release.h"
#include "kernodeck/python/environment.h"
#include "kernodeck/python/torch_build.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/version.h"

namespace kernodeck::probe {

using nlohmann::json;
using report::Severity;

std::string driverFromLibcudaName(const std::string& name) {
  static const std::regex re(R"(^libcuda\.so\.(\d+\.\d+(?:\.\d+)?)$)");
  std::smatch m;
  return std::regex_match(name, m, re) ? m[1].str() : "";
}

namespace {

const char* kPythonScript = R"PY(
import json, sys
out = {"python": sys.version.split()[0]}
try:
    import torch
    out["torch"] = torch.__version__
    out["cuda"] = torch.version.cuda
    out["hip"] = getattr(torch.version, "hip", None)
    out["cuda_available"] = bool(torch.cuda.is_available())
    out["devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if out["cuda_available"] else []
    out["arch_list"] = torch.cuda.get_arch_list() if out["cuda_available"] else []
    g = torch.Generator().manual_seed(1234)
    a = torch.randn(64, 64, generator=g)
    b = torch.randn(64, 64, generator=g)
    dev = "cuda" if out["cuda_available"] else "cpu"
    c = (a.to(dev) @ b.to(dev)).cpu()
    out["device"] = dev
    out["max_abs_diff"] = float((c - a @ b).abs().max())
    out["finite"] = bool(torch.isfinite(c).all())
except Exception as e:
    out["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(out))
)PY";

struct LibcudaInfo {
  bool loaded = false;
  std::string path, fileDriver, error;
  int driverApi = 0;  // cuDriverGetVersion
};

LibcudaInfo probeLibcuda() {
  LibcudaInfo i;
  void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    i.error = e ? e : "cannot load libcuda.so.1";
    return i;
  }
  i.loaded = true;
  struct link_map* lm = nullptr;
  if (::dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) {
    char real[4096];
    i.path = ::realpath(lm->l_name, real) ? real : lm->l_name;
    i.fileDriver = driverFromLibcudaName(i.path.substr(i.path.rfind('/') + 1));
  }
  using GetVersion = int (*)(int*);
  if (auto f = reinterpret_cast<GetVersion>(::dlsym(h, "cuDriverGetVersion"))) {
    int v = 0;
    if (f(&v) == 0) i.driverApi = v;
  }
  return i;  // kept loaded: unloading a driver library is not safe
}

class Probe {
 public:
  explicit Probe(const ProbeOptions& o) : o_(o), r_("probe") {
    if (!o_.devFs) ownDevFs_ = host::diskHostFs(o_.devRoot);
    devFs_ = o_.devFs ? o_.devFs : ownDevFs_.get();
  }

  report::Report run() {
    r_.declareSteps({"attached_report", "versions", "devices", "compute", "python", "reconcile"});
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    r_.subject()["reference"] = std::string("probe on ") + host;
    // First: a node that requires an audited image learns it before anything else; a registry it
    // cannot reach fails the step and leaves the rest not reached (exit 3), never a pass.
    if (o_.checkReport) {
      r_.runStep("attached_report", [&] { return o_.checkReport(r_); });
      // Not met (or not checked): stop here. The later steps stay not_reached, so nothing of the
      // image is read and no plugin is loaded on behalf of an image that has no passing report.
      const json& sec = r_.sections().contains("attached_report") ? r_.sections().at("attached_report") : json();
      if (r_.failed() || !sec.is_object() || sec.value("met", false) != true) return std::move(r_);
    } else {
      r_.skipStep("attached_report", "no --require-report");
    }
    loadContext();
    r_.runStep("versions", [&] { return versions(); });
    r_.runStep("devices", [&] { return devices(); });
    r_.runStep("compute", [&] { return compute(); });
    if (o_.python.empty())
      r_.skipStep("python", "no --python interpreter given");
    else
      r_.runStep("python", [&] { return pythonStep(); });
    r_.runStep("reconcile", [&] { return reconcile(); });
    return std::move(r_);
  }

 private:
  void loadContext() {
    // Expectation: a file, else baked into the image, else derived live from the Python inventory.
    std::string file =
        !o_.expectFrom.empty() ? o_.expectFrom : (o_.root == "/" ? "" : o_.root) + "/etc/kernodeck/expect.json";
    if (auto t = util::readFileLimited(file, 1 << 20); t.ok()) {
      auto e = gpu::parseExpectation(*t);
      if (e.ok())
        expect_ = *e, expectSource_ = file;
      else
        expectError_ = file + ": " + e.error().message;
    } else if (!o_.expectFrom.empty()) {
      expectError_ = t.error().message;
    }
    if (!expect_) {
      if (auto view = oci::openDirView(o_.root); view.ok()) {
        std::map<std::string, std::string> env;
        for (const char* k : {"CUDA_VERSION", "NVIDIA_REQUIRE_CUDA", "PYTHON_VERSION"})
          if (const char* v = std::getenv(k)) env[k] = v;
        auto envs = python::discoverEnvironments(**view, env.count("PYTHON_VERSION") ? env["PYTHON_VERSION"] : "");
        auto build = python::readTorchBuild(**view, envs);
        if (build.torch) {
          gpu::TorchFacts facts;
          facts.found = true;
          facts.version = build.torch->version, facts.cuda = build.torch->cuda, facts.hip = build.torch->hip;
          facts.nvidiaWheels = build.nvidiaWheels;
          expect_ = gpu::expectationOf(facts, os::readImageCuda(**view, env), "");
          expectSource_ = "live Python inventory of " + o_.root;
        }
      }
    }
    // The host's facts: the hook's record parsed once into HostFacts, else read here.
    if (auto t = util::readFileLimited(o_.hostRecord, 4u << 20); t.ok()) {
      if (auto h = host::parseHostRecord(*t); h.ok())
        hostFacts_ = std::move(h->host), hostSource_ = o_.hostRecord;
      else
        hostError_ = o_.hostRecord + " " + h.error().message;
    }
    if (hostSource_.empty()) {
      hostFacts_ = o_.hostFs ? host::readHostFacts(*o_.hostFs) : host::readHostFacts(o_.hostRoot);
      hostSource_ = "read directly under " + o_.hostRoot;
    }
    if (hostFacts_.nvidia) hostDriver_ = hostFacts_.nvidia->version, hostMaxCuda_ = hostFacts_.maxCuda;
    expectDevice_ = o_.expect;
    if (expectDevice_ == "auto")
      expectDevice_ = expect_ && !expect_->accelerator.empty() ? expect_->accelerator : "cpu";
    r_.subject()["expect"] = expectDevice_;
    r_.subject()["expectation_source"] = expect_ ? json(expectSource_) : json(nullptr);
    r_.subject()["host_record_source"] = hostSource_;
    if (!expectError_.empty()) r_.add("probe.expectation.invalid", Severity::Warning, expectError_);
    if (!hostError_.empty()) r_.add("probe.host_record.invalid", Severity::Warning, hostError_);
  }

  Status versions() {
    json v;
    v["kernodeck"] = kVersion;
    v["loads_libraries"] = o_.loadsLibraries;
    if (o_.loadsLibraries) torch_ = libtorchInfo();
    v["libtorch"] = torch_.available ? json{{"version", torch_.version},
                                            {"cuda_build", torch_.cudaBuild},
                                            {"hip_build", torch_.hipBuild},
                                            {"cuda_available", torch_.cudaAvailable},
                                            {"cuda_devices", torch_.cudaDevices}}
                                     : json(nullptr);
    if (auto t = util::readFileLimited((o_.root == "/" ? "" : o_.root) + "/etc/os-release", 65536); t.ok()) {
      auto kv = os::parseOsRelease(*t);
      v["os"] = kv.count("PRETTY_NAME") ? kv["PRETTY_NAME"] : kv["ID"];
    }
    if (auto t = util::readFileLimited("/proc/cpuinfo", 4u << 20); t.ok()) {
      for (const auto& line : util::split(*t, '\n'))
        if (line.rfind("model name", 0) == 0) {
          v["cpu"] = std::string(util::trim(line.substr(line.find(':') + 1)));
          break;
        }
    }
    v["cpus"] = ::sysconf(_SC_NPROCESSORS_ONLN);
    r_.section("versions") = v;
    return {};
  }

  // The nodes NVIDIA's validator does not check, each missing one a finding naming it:
  // nvidia-uvm, the MIG capability nodes when NVIDIA_VISIBLE_DEVICES asks for MIG devices, the
  // IMEX channels NVIDIA_IMEX_CHANNELS asks for ("0,1", "all").
  template <class Note, class Check>
  void checkNodesTheValidatorMisses(Note& note, Check& checkNode, bool required) {
    auto missing = [&](const std::string& path, const std::string& why) {
      r_.add("probe.device.missing", required ? Severity::Error : Severity::Warning, path + " " + why,
             {{"path", path}});
    };
    if (checkNode("/dev/nvidia-uvm") == "missing")
      missing("/dev/nvidia-uvm", "is not in the container: CUDA cannot start without it (pass it, or load nvidia-uvm)");
    const char* visible = std::getenv("NVIDIA_VISIBLE_DEVICES");
    if (visible && gpu::parseVisibleDevices(std::string(visible)).requestsMig()) {
      auto caps = devFs_->list("/dev/nvidia-caps");
      if (caps.empty())
        missing("/dev/nvidia-caps",
                "holds no MIG capability node though NVIDIA_VISIBLE_DEVICES asks for MIG devices: "
                "the MIG instance cannot be opened");
      for (const auto& name : caps) note("/dev/nvidia-caps/" + name, checkNode("/dev/nvidia-caps/" + name), required);
    }
    const char* imex = std::getenv("NVIDIA_IMEX_CHANNELS");
    std::string channels = imex ? std::string(util::trim(imex)) : "";
    if (channels.empty() || channels == "none" || channels == "void") return;
    const std::string dir = "/dev/nvidia-caps-imex-channels";
    std::vector<std::string> want;
    if (channels == "all") {
      for (const auto& name : devFs_->list(dir)) want.push_back(dir + "/" + name);
      if (want.empty()) missing(dir, "holds no IMEX channel though NVIDIA_IMEX_CHANNELS=all asks for them");
    } else {
      for (const auto& id : util::split(channels, ','))
        if (auto n = util::parseUint(util::trim(id))) want.push_back(dir + "/channel" + std::to_string(*n));
    }
    for (const auto& path : want) {
      std::string problem = checkNode(path);
      note(path, problem, required);
      if (problem == "missing") missing(path, "is not in the container though NVIDIA_IMEX_CHANNELS asks for it");
    }
  }

  Status devices() {
    json d = json::object();
    json nodes = json::array();
    auto checkNode = [&](const std::string& path) -> std::string {
      host::DeviceOpen d = devFs_->openDevice(path);
      if (!d.exists) return "missing";
      if (d.error == EPERM || d.error == EACCES)
        return std::string("cannot be opened: ") + std::strerror(d.error) +
               " (the container's device cgroup denies it: the \"Failed to initialize NVML: Unknown Error\" case)";
      if (d.error != 0) return std::string("cannot be opened: ") + std::strerror(d.error);
      return "";
    };
    std::vector<std::string> gpuNodes;
    for (const auto& name : devFs_->list("/dev")) {
      static const std::regex gpu(R"(^nvidia[0-9]+$)");
      if (std::regex_match(name, gpu)) gpuNodes.push_back("/dev/" + name);
    }
    bool nvidiaOk = true;
    std::string firstProblem;
    auto note = [&](const std::string& path, const std::string& problem, bool required) {
      nodes.push_back({{"path", path}, {"problem", problem.empty() ? json(nullptr) : json(problem)}});
      if (!problem.empty()) {
        if (problem.find("cgroup") != std::string::npos)
          r_.add("probe.device.denied", Severity::Error,
                 path + " " + problem + "; fix the device rules (CDI, device plugin, or the runtime's cgroup setup)",
                 {{"path", path}});
        if (required) {
          nvidiaOk = false;
          if (firstProblem.empty()) firstProblem = path + " " + problem;
        }
      }
    };
    bool wantCuda = expectDevice_ == "cuda";
    if (wantCuda || !gpuNodes.empty()) {
      note("/dev/nvidiactl", checkNode("/dev/nvidiactl"), wantCuda);
      note("/dev/nvidia-uvm", checkNode("/dev/nvidia-uvm"), wantCuda);
      if (gpuNodes.empty() && wantCuda) {
        nvidiaOk = false;
        if (firstProblem.empty()) firstProblem = "no /dev/nvidiaN device node is visible";
      }
      for (const auto& g : gpuNodes) note(g, checkNode(g), wantCuda);
      checkNodesTheValidatorMisses(note, checkNode, wantCuda);
      // The static probe loads no library of the judged image; its python step asks the image's torch.
      if (o_.loadsLibraries)
        libcuda_ = probeLibcuda();
      else
        libcuda_.error = "not loaded: the static kernodeck-probe loads no library of the image";
      json lc = {{"loaded", libcuda_.loaded},
                 {"path", libcuda_.path},
                 {"file_driver", libcuda_.fileDriver},
                 {"cuda_driver_api", libcuda_.driverApi},
                 {"error", libcuda_.error}};
      d["libcuda"] = lc;
      if (o_.loadsLibraries && !libcuda_.loaded && wantCuda) {
        nvidiaOk = false;
        if (firstProblem.empty()) firstProblem = "libcuda.so.1 cannot be loaded: " + libcuda_.error;
      }
      if (libcuda_.loaded && !libcuda_.fileDriver.empty() && !hostDriver_.empty() &&
          libcuda_.fileDriver != hostDriver_) {
        bool compat = libcuda_.path.find("compat") != std::string::npos;
        r_.add(compat ? "probe.libcuda.compat" : "probe.libcuda.mismatch", compat ? Severity::Warning : Severity::Error,
               "libcuda.so.1 is " + libcuda_.path + " (driver " + libcuda_.fileDriver +
                   ") but the host's kernel driver is " + hostDriver_ +
                   (compat ? ": a cuda-compat library shadows the host driver; it only works on the driver branches it "
                             "supports"
                           : ": user-space and kernel driver differ (\"driver/library version mismatch\"); mount the "
                             "host's driver libraries"),
               {{"path", libcuda_.path}});
      }
    }
    if (expectDevice_ == "rocm") {
      note("/dev/kfd", checkNode("/dev/kfd"), true);
      bool render = false;
      for (const auto& n : devFs_->list("/dev/dri"))
        if (n.rfind("renderD", 0) == 0) {
          render = true;
          note("/dev/dri/" + n, checkNode("/dev/dri/" + n), true);
        }
      if (!render) {
        nvidiaOk = false;
        if (firstProblem.empty()) firstProblem = "no /dev/dri/renderD* node is visible";
      }
    }
    if (wantCuda && nvidiaOk && torch_.available && !torch_.cudaAvailable) {
      nvidiaOk = false;
      firstProblem =
          "LibTorch " + torch_.version + " sees no CUDA device" + (torch_.cudaBuild ? "" : " (it is a CPU-only build)");
    }
    d["nodes"] = nodes;
    d["visible_gpu_nodes"] = gpuNodes;
    visibleGpus_ = static_cast<int>(gpuNodes.size());
    r_.section("devices") = d;
    if (!nvidiaOk)
      return Error::Unreachable("expected accelerator " + expectDevice_ + " is not reachable: " + firstProblem +
                                " (the probe never falls back to the CPU)");
    return {};
  }

  Status compute() {
    json c;
    c["tolerance"] = {{"atol", o_.tolerance.atol}, {"rtol", o_.tolerance.rtol}};
    c["declared_before_run"] = true;
    if (!o_.loadsLibraries) {
      r_.section("compute") = c;
      // The static probe computes only through the image's own Python, as a child process.
      if (o_.python.empty() && expectDevice_ != "cpu")
        return Error::Unsupported("the static kernodeck-probe computes on " + expectDevice_ +
                                  " only through the image's Python: give --python");
      r_.skipStep("compute",
                  o_.python.empty()
                      ? "the static kernodeck-probe loads no LibTorch and no --python was given"
                      : "the static kernodeck-probe loads no LibTorch: the python step computes in " + o_.python);
      return {};
    }
    if (!torch_.available) {
      r_.section("compute") = c;
      // Why: a build without LibTorch, or a plugin that is missing or of another build.
      const std::string why = libtorch::pluginError();
      if (expectDevice_ != "cpu")
        return Error::Unsupported("LibTorch is unavailable (" + why + "); it cannot compute on " + expectDevice_);
      r_.skipStep("compute", "LibTorch is unavailable: " + why);
      return {};
    }
    std::vector<std::string> devs = {"cpu"};
    if (expectDevice_ == "cuda" || expectDevice_ == "rocm")
      devs.push_back("cuda");  // ROCm builds of torch use the cuda device type
    auto results = runCompute(devs, o_.tolerance);
    json rs = json::array();
    std::string firstError;
    for (const auto& res : results) {
      rs.push_back({{"device", res.device},
                    {"ok", res.ok},
                    {"max_abs_diff", res.maxAbsDiff},
                    {"max_rel_diff", res.maxRelDiff},
                    {"checksum", res.checksum},
                    {"finite", res.finite},
                    {"error", res.error.empty() ? json(nullptr) : json(res.error)}});
      if (!res.ok && firstError.empty()) firstError = res.error;
      if (!res.finite)
        r_.add("probe.compute.nonfinite", Severity::Error, res.error, {{"device", res.device}});
      else if (!res.ok)
        r_.add("probe.compute.mismatch", Severity::Error, res.error, {{"device", res.device}});
    }
    c["results"] = rs;
    c["matmul"] = {{"n", 256}, {"dtype", "float32"}, {"seed", 1234}};
    r_.section("compute") = c;
    if (!firstError.empty()) return Error::Failed(firstError);
    return {};
  }

  Status pythonStep() {
    util::ProcessSpec spec;
    spec.argv = {o_.python, "-c", kPythonScript};
    spec.timeoutMs = o_.pythonTimeoutS * 1000;
    auto started = util::runProcess(spec);
    if (!started.ok()) {
      r_.section("python") = {{"interpreter", o_.python}, {"exit_status", nullptr}, {"timed_out", false}};
      return Error::Failed(started.error().message);
    }
    const util::ProcessResult& cr = *started;
    int status = cr.exited ? cr.exitCode : 128 + cr.signal;
    json p = {{"interpreter", o_.python}, {"exit_status", status}, {"timed_out", cr.timedOut}};
    if (cr.timedOut) {
      r_.section("python") = p;
      return Error::Timeout(o_.python + " did not finish within " + std::to_string(o_.pythonTimeoutS) + " s");
    }
    json j = util::parseUntrustedJson(cr.out);
    if (!j.is_object()) {
      std::string err(util::trim(cr.err));
      if (err.size() > 300) err = err.substr(err.size() - 300);
      r_.section("python") = p;
      return Error::Failed(o_.python + " " + cr.describe() + (err.empty() ? "" : ": " + util::printable(err)));
    }
    p["result"] = j;
    r_.section("python") = p;
    if (j.contains("error")) return Error::Failed("the project's Python failed: " + j["error"].get<std::string>());
    if (expectDevice_ == "cuda" && !j.value("cuda_available", false))
      return Error::Failed("the project's torch " + j.value("torch", std::string("?")) + " does not see CUDA");
    if (!j.value("finite", true)) return Error::Failed("the project's torch produced non-finite values");
    pythonTorch_ = j;
    return {};
  }

  Status reconcile() {
    json rec = {{"expectation", expect_ ? expect_->toJson() : json(nullptr)},
                {"host_driver", hostDriver_},
                {"host_max_cuda", hostMaxCuda_}};
    std::string torchCuda = expect_ ? expect_->torchCuda : "";
    if (torchCuda.empty() && pythonTorch_ && pythonTorch_->contains("cuda") && (*pythonTorch_)["cuda"].is_string())
      torchCuda = gpu::majorMinor((*pythonTorch_)["cuda"].get<std::string>());
    if (!torchCuda.empty() && !hostDriver_.empty()) {
      auto v =
          gpu::checkCuda(hostDriver_, torchCuda, expect_ ? expect_->compatDriverBranches : std::vector<std::string>{});
      rec["cuda_support"] = gpu::toString(v.support);
      if (v.support == gpu::CudaSupport::Unsupported)
        r_.add("probe.cuda.unsupported", Severity::Error,
               "torch is built for CUDA " + torchCuda + " but " + v.explanation +
                   "; upgrade the node's driver to at least the " + "branch for CUDA " + torchCuda +
                   ", or install a torch build for CUDA " +
                   (hostMaxCuda_.empty() ? "the driver supports" : hostMaxCuda_),
               {{"driver", hostDriver_}, {"cuda", torchCuda}});
      else if (v.support != gpu::CudaSupport::Native)
        r_.add("probe.cuda.compat", Severity::Info, v.explanation, {{"driver", hostDriver_}, {"cuda", torchCuda}});
    } else if (!torchCuda.empty() && hostDriver_.empty() && expectDevice_ == "cuda") {
      r_.add("probe.driver.unknown", Severity::Warning,
             "no host record and no readable NVIDIA driver: the CUDA build cannot be checked");
    }
    // NVIDIA_REQUIRE_* of the process environment and the expectation.
    std::map<std::string, std::string> env;
    for (char** e = environ; e && *e; ++e) {
      std::string kv = *e;
      size_t eq = kv.find('=');
      if (eq != std::string::npos && kv.rfind("NVIDIA_", 0) == 0) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    if (expect_)
      for (size_t i = 0; i < expect_->nvidiaRequire.size(); ++i)
        env["NVIDIA_REQUIRE_KERNODECK_" + std::to_string(i)] = expect_->nvidiaRequire[i];
    auto reqs = gpu::requirementsFromEnv(env);
    std::set<std::string> checked;  // the image's variable and the expectation often say the same thing: once
    if (!hostDriver_.empty() && !reqs.disabled)
      for (const auto& rq : reqs.requirements) {
        if (!checked.insert(rq.text).second) continue;
        std::string arch = hostFacts_.gpus.empty() ? "" : hostFacts_.gpus[0].arch;
        std::string brand = hostFacts_.gpus.empty() ? "" : hostFacts_.gpus[0].brand;
        std::string why;
        if (gpu::evaluate(rq, {hostMaxCuda_, hostDriver_, arch, brand}, &why) == gpu::Tri::False)
          r_.add("probe.require.unsatisfied", Severity::Error,
                 "requirement '" + rq.text + "' is not met by driver " + hostDriver_ + ": " + why,
                 {{"requirement", rq.text}});
      }
    // GPUs requested vs visible.
    auto visible = gpu::parseVisibleDevices(
        env.count("NVIDIA_VISIBLE_DEVICES") ? std::optional<std::string>(env["NVIDIA_VISIBLE_DEVICES"]) : std::nullopt);
    int requested = visible.kind == gpu::VisibleDevices::All ? static_cast<int>(hostFacts_.gpus.size())
                    : visible.kind == gpu::VisibleDevices::List && !visible.requestsMig()
                        ? static_cast<int>(visible.ids.size())
                        : -1;
    rec["gpus_requested"] = requested;
    rec["gpus_visible"] = visibleGpus_;
    if (requested > 0 && visibleGpus_ < requested)
      r_.add("probe.gpu.count", Severity::Error,
             std::to_string(requested) + " GPU(s) requested (NVIDIA_VISIBLE_DEVICES) but " +
                 std::to_string(visibleGpus_) +
                 " visible in the container: check the device plugin's allocation and the runtime's device injection");
    // GPU capability vs the torch build's architectures: the expectation's list, else the one
    // the project's torch reports (a pip wheel's version.py does not carry it).
    std::vector<std::string> archList = expect_ ? expect_->torchArchList : std::vector<std::string>{};
    if (archList.empty() && pythonTorch_ && pythonTorch_->contains("arch_list") &&
        (*pythonTorch_)["arch_list"].is_array())
      for (const auto& a : (*pythonTorch_)["arch_list"])
        if (a.is_string()) archList.push_back(a.get<std::string>());
    if (!archList.empty()) rec["arch_list"] = archList;
    bool judgedCode = judgeLibraries(rec);
    for (const auto& g : hostFacts_.gpus) {
      if (judgedCode || gpu::archRunsOn(archList, g.arch) != false) continue;
      std::string sm = gpu::smName(g.arch);
      r_.add("probe.arch.unsupported", Severity::Error,
             (g.model.empty() ? std::string("GPU") : g.model) + " is " + sm + " but torch was built for " +
                 util::join(archList, ", ") +
                 ": kernels will fail with \"no kernel image is available\"; use a torch build that includes " + sm,
             {{"arch", sm}});
    }
    r_.section("reconcile") = rec;
    return {};
  }

  // The expectation's gpu_code, every library of it, against the node's GPUs, once per compute
  // capability (gpu/gpu_code_judge.h; the hook's rule). False when the expectation lists none:
  // torch's arch list is judged instead.
  bool judgeLibraries(json& rec) {
    if (!expect_ || expect_->gpuCode.empty()) return false;
    std::map<std::string, std::vector<std::string>> byArch;  // capability -> GPU models
    for (const auto& g : hostFacts_.gpus)
      if (!g.arch.empty()) byArch[g.arch].push_back(g.model.empty() ? std::string("GPU") : g.model);
    json judged = json::object();
    for (const auto& [arch, models] : byArch) {
      std::string who = util::join(models, ", ") + ", compute capability " + arch;
      auto verdicts = gpu::judgeGpuCode(expect_->gpuCode, arch);
      judged[arch] = gpu::toString(gpu::worstFit(verdicts));
      for (const auto& v : verdicts) {
        if (v.fit != gpu::CodeFit::None && v.fit != gpu::CodeFit::Ptx) continue;
        std::map<std::string, std::string> ev = {{"arch", gpu::smName(arch)}, {"library", v.library}};
        if (v.fit == gpu::CodeFit::None)
          r_.add("probe.arch.unsupported", Severity::Error, gpu::explainVerdict(v, who, arch), ev);
        else
          r_.add("probe.arch.ptx_only", Severity::Warning, gpu::explainVerdict(v, who, arch), ev);
      }
    }
    rec["gpu_code"] = {{"libraries", expect_->gpuCode.size()}, {"fit", judged}};
    return true;
  }

  const ProbeOptions& o_;
  std::unique_ptr<host::HostFs> ownDevFs_;
  const host::HostFs* devFs_;  // the container's /dev: under devRoot, or the options' devFs (tests)
  report::Report r_;
  std::optional<gpu::Expectation> expect_;
  std::string expectSource_, expectError_;
  host::HostFacts hostFacts_;  // from the host record, else read under hostRoot
  std::string hostSource_, hostError_, hostDriver_, hostMaxCuda_;
  std::string expectDevice_;
  LibtorchInfo torch_;
  LibcudaInfo libcuda_;
  int visibleGpus_ = 0;
  std::optional<json> pythonTorch_;
};

}  // namespace

report::Report runProbe(const ProbeOptions& opts) { return Probe(opts).run(); }

std::string terminationMessage(const report::Report& r, int exitCode) {
  std::string msg = "kernodeck " + r.tool() + ": exit " + std::to_string(exitCode);
  for (const auto& s : r.steps())
    if (s.status == report::StepStatus::Failed) {
      msg += "; step " + s.name + " failed: " + s.error;
      break;
    }
  // Each distinct code once (counted when repeated); on a wrong key, the key given and those seen.
  std::vector<std::pair<std::string, int>> codes;
  for (const auto& f : r.findings())
    if (f.severity == report::Severity::Error) {
      auto it = std::find_if(codes.begin(), codes.end(), [&](const auto& c) { return c.first == f.code; });
      it == codes.end() ? codes.push_back({f.code, 1}) : void(++it->second);
    }
  std::string list;
  size_t errors = 0;
  for (const auto& [code, n] : codes) {
    errors += static_cast<size_t>(n);
    if (list.size() < 512) list += (list.empty() ? "" : ", ") + code + (n > 1 ? " (x" + std::to_string(n) + ")" : "");
  }
  if (errors) msg += "; " + std::to_string(errors) + " error finding(s): " + list;
  const json sec = r.sections().value("attached_report", json::object());
  if (list.find("report.signature.invalid") != std::string::npos && sec.value("keyid", json()).is_string()) {
    std::set<std::string> keys;
    for (const auto& e : sec.value("reports", json::array()))
      if (e.is_object() && e.value("keyid", json()).is_string()) keys.insert(e["keyid"].get<std::string>());
    keys.erase("");
    msg += "; --key is " + sec["keyid"].get<std::string>() +
           (keys.empty() ? "" : ", the reports are signed by " + util::join({keys.begin(), keys.end()}, ", "));
  }
  return util::printable(msg, 4000);
}

}  // namespace kernodeck::probe
