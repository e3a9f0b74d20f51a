#include "kernodeck/python/torch_build.h"

#include <nlohmann/json.hpp>
#include <regex>

#include "kernodeck/gpu/cuda_compat.h"
#include "kernodeck/gpu/fwd_note_capture.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

std::optional<TorchVersionPy> parseTorchVersionPy(std::string_view text) {
  static const std::regex assign(R"(^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=\s*(.+?)\s*$)");
  TorchVersionPy t;
  bool any = false;
  for (const auto& line : util::split(text.substr(0, 65536), '\n')) {
    std::smatch m;
    if (!std::regex_match(line, m, assign)) continue;
    std::string key = m[1].str(), raw = m[2].str();
    std::string value;
    if (raw.size() >= 2 && (raw.front() == '\'' || raw.front() == '"') && raw.back() == raw.front())
      value = raw.substr(1, raw.size() - 2);
    else if (raw == "None")
      value = "";
    else
      value = raw;
    if (key == "__version__")
      t.version = value, any = true;
    else if (key == "cuda")
      t.cuda = value;
    else if (key == "hip")
      t.hip = value;
    else if (key == "git_version")
      t.gitVersion = value;
    else if (key == "debug")
      t.debug = value == "True";
  }
  if (!any) return std::nullopt;
  return t;
}

CudaBuild readCudaBuild(const oci::FsView& v, const std::vector<PythonEnv>& envs,
                        const std::map<std::string, std::string>& env) {
  CudaBuild b;
  for (const auto& e : envs) {
    for (const auto& d : e.distributions) {
      if (d.key.rfind("nvidia-", 0) == 0 && !b.nvidiaWheels.count(d.key)) b.nvidiaWheels[d.key] = d.version;
      if (d.key == "torch" && !b.torch) {
        if (auto t = v.readFile(d.location + "/torch/version.py", 65536); t.ok()) {
          b.torch = parseTorchVersionPy(*t);
          b.torchLocation = d.location;
        }
      }
    }
  }
  for (const auto& name : v.list("usr/local")) {
    if (name.rfind("cuda", 0) != 0) continue;
    if (auto t = v.readFile("usr/local/" + name + "/version.json", 65536); t.ok() && b.toolkit.empty()) {
      auto j = nlohmann::json::parse(*t, nullptr, false);
      if (j.is_object() && j.contains("cuda") && j["cuda"].is_object() && j["cuda"].contains("version") &&
          j["cuda"]["version"].is_string())
        b.toolkit = j["cuda"]["version"].get<std::string>();
    }
    for (const auto& lib : v.list("usr/local/" + name + "/compat")) {
      std::string driver = gpu::compatLibraryDriver(lib);
      if (driver.empty()) continue;
      auto addBranch = [&](const std::string& branch) {
        if (std::find(b.compatDriverBranches.begin(), b.compatDriverBranches.end(), branch) ==
            b.compatDriverBranches.end())
          b.compatDriverBranches.push_back(branch);
      };
      // The library's own .note.cuda.fwd_compatibility says which host branches it runs on, as
      // NVIDIA's enable-cuda-compat hook reads it; its name gives only its own branch.
      std::string path = "usr/local/" + name + "/compat/" + lib;
      auto bytes = v.readFile(path, kMaxCompatLibraryBytes);
      if (!bytes.ok()) {
        addBranch(util::split(driver, '.')[0]);
        continue;
      }
      // An image's view holds only the bytes the note is read from (the audit's capture); a
      // directory's, the file.
      auto note = gpu::isKeptBytes(*bytes) ? gpu::readKeptFwdCompatNote(*bytes)
                                           : gpu::readFwdCompatNote([&](uint64_t off, size_t len) {
                                               return off >= bytes->size() ? std::string() : bytes->substr(off, len);
                                             });
      if (!note.ok()) {
        b.inconsistencies.push_back("/" + path + ": its .note.cuda.fwd_compatibility cannot be read (" +
                                    note.error().message + "): NVIDIA's toolkit will not use it");
        continue;
      }
      if (!note->has_value()) continue;  // no note: the toolkit never puts it in front of the driver
      for (int branch : (*note)->driverBranches) addBranch(std::to_string(branch));
      b.compatLibraries.push_back({"/" + path, driver, **note});
    }
  }
  if (auto it = env.find("CUDA_VERSION"); it != env.end()) b.envCudaVersion = it->second;
  if (auto it = env.find("NVIDIA_REQUIRE_CUDA"); it != env.end()) b.envRequireCuda = it->second;

  // Inconsistencies.
  if (b.torch) {
    const std::string& tv = b.torch->version;
    size_t plus = tv.find('+');
    std::string local = plus == std::string::npos ? "" : tv.substr(plus + 1);
    std::string cuda = b.torch->cuda;
    if (local.rfind("cu", 0) == 0 && !cuda.empty()) {
      std::string digits;
      for (char c : cuda)
        if (std::isdigit(static_cast<unsigned char>(c))) digits.push_back(c);
      if ("cu" + digits != local)
        b.inconsistencies.push_back("torch " + tv + " carries the label +" + local + " but torch.version.cuda is " +
                                    cuda);
    }
    if (local == "cpu" && !cuda.empty())
      b.inconsistencies.push_back("torch " + tv + " is labelled CPU-only but was built for CUDA " + cuda);
    if (!cuda.empty()) {
      std::string major = util::split(cuda, '.')[0];
      for (const auto& [name, ver] : b.nvidiaWheels) {
        static const std::regex cuTag(R"(-cu(\d+)$)");
        std::smatch m;
        if (std::regex_search(name, m, cuTag) && m[1].str() != major)
          b.inconsistencies.push_back("torch is built for CUDA " + cuda + " but " + name + " " + ver +
                                      " is installed (CUDA " + m[1].str() + ")");
      }
      if (auto it = b.nvidiaWheels.find("nvidia-cuda-runtime-cu" + major);
          it != b.nvidiaWheels.end() && gpu::compareVersions(gpu::majorMinor(it->second), gpu::majorMinor(cuda)) < 0)
        b.inconsistencies.push_back("torch is built for CUDA " + cuda + " but the CUDA runtime wheel is only " +
                                    it->second);
      if (!b.envCudaVersion.empty() && util::split(b.envCudaVersion, '.')[0] != major)
        b.inconsistencies.push_back("the image's CUDA_VERSION " + b.envCudaVersion +
                                    " is another major release than torch's CUDA " + cuda);
    }
    if (cuda.empty() && b.torch->hip.empty() && !b.nvidiaWheels.empty())
      b.inconsistencies.push_back("torch " + tv + " is a CPU build, yet NVIDIA CUDA wheels are installed");
  }
  return b;
}

gpu::Expectation CudaBuild::expectation(const std::string& imageDigest) const {
  gpu::Expectation e;
  e.imageDigest = imageDigest;
  if (torch) {
    e.torchVersion = torch->version;
    e.torchCuda = torch->cuda.empty() ? "" : gpu::majorMinor(torch->cuda);
    e.torchHip = torch->hip;
    e.accelerator = !torch->cuda.empty() ? "cuda" : !torch->hip.empty() ? "rocm" : "cpu";
  }
  for (const char* k : {"nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11"})
    if (auto it = nvidiaWheels.find(k); it != nvidiaWheels.end() && e.cudaRuntime.empty()) e.cudaRuntime = it->second;
  if (e.cudaRuntime.empty()) e.cudaRuntime = toolkit;
  e.compatDriverBranches = compatDriverBranches;
  e.compatLibraries = compatLibraries;
  if (!envRequireCuda.empty())
    e.nvidiaRequire.push_back(envRequireCuda);
  else if (!envCudaVersion.empty())
    e.nvidiaRequire.push_back("cuda>=" + gpu::majorMinor(envCudaVersion));
  return e;
}

}  // namespace kernodeck::python
