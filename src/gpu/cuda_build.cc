// The GPU rules' judgement of an image's torch/CUDA build (cuda_build.h): pure functions of
// the facts python and os read.
#include "kernodeck/gpu/cuda_build.h"

#include <cctype>
#include <regex>

#include "kernodeck/gpu/cuda_compat.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::gpu {

std::vector<std::string> torchInconsistencies(const TorchFacts& torch, const ImageCuda& image) {
  std::vector<std::string> out;
  const std::string& envCudaVersion = image.envCudaVersion;
  if (torch.found) {
    const std::string& tv = torch.version;
    size_t plus = tv.find('+');
    std::string local = plus == std::string::npos ? "" : tv.substr(plus + 1);
    std::string cuda = torch.cuda;
    if (local.rfind("cu", 0) == 0 && !cuda.empty()) {
      std::string digits;
      for (char c : cuda)
        if (std::isdigit(static_cast<unsigned char>(c))) digits.push_back(c);
      if ("cu" + digits != local)
        out.push_back("torch " + tv + " carries the label +" + local + " but torch.version.cuda is " + cuda);
    }
    if (local == "cpu" && !cuda.empty())
      out.push_back("torch " + tv + " is labelled CPU-only but was built for CUDA " + cuda);
    if (!cuda.empty()) {
      std::string major = util::split(cuda, '.')[0];
      for (const auto& [name, ver] : torch.nvidiaWheels) {
        static const std::regex cuTag(R"(-cu(\d+)$)");
        std::smatch m;
        if (name.size() <= 256 && std::regex_search(name, m, cuTag) && m[1].str() != major)  // bounded
          out.push_back("torch is built for CUDA " + cuda + " but " + name + " " + ver + " is installed (CUDA " +
                        m[1].str() + ")");
      }
      if (auto it = torch.nvidiaWheels.find("nvidia-cuda-runtime-cu" + major);
          it != torch.nvidiaWheels.end() && compareVersions(majorMinor(it->second), majorMinor(cuda)) < 0)
        out.push_back("torch is built for CUDA " + cuda + " but the CUDA runtime wheel is only " + it->second);
      if (!envCudaVersion.empty() && util::split(envCudaVersion, '.')[0] != major)
        out.push_back("the image's CUDA_VERSION " + envCudaVersion + " is another major release than torch's CUDA " +
                      cuda);
    }
    if (cuda.empty() && torch.hip.empty() && !torch.nvidiaWheels.empty())
      out.push_back("torch " + tv + " is a CPU build, yet NVIDIA CUDA wheels are installed");
  }
  return out;
}

Expectation expectationOf(const TorchFacts& torch, const ImageCuda& cuda, const std::string& imageDigest) {
  Expectation e;
  e.imageDigest = imageDigest;
  if (torch.found) {
    e.torchVersion = torch.version;
    e.torchCuda = torch.cuda.empty() ? "" : majorMinor(torch.cuda);
    e.torchHip = torch.hip;
    e.accelerator = !torch.cuda.empty() ? "cuda" : !torch.hip.empty() ? "rocm" : "cpu";
  }
  for (const char* k : {"nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11"})
    if (auto it = torch.nvidiaWheels.find(k); it != torch.nvidiaWheels.end() && e.cudaRuntime.empty())
      e.cudaRuntime = it->second;
  if (e.cudaRuntime.empty()) e.cudaRuntime = cuda.toolkit;
  e.compatDriverBranches = cuda.compatDriverBranches;
  e.compatLibraries = cuda.compatLibraries;
  if (!cuda.envRequireCuda.empty())
    e.nvidiaRequire.push_back(cuda.envRequireCuda);
  else if (!cuda.envCudaVersion.empty())
    e.nvidiaRequire.push_back("cuda>=" + majorMinor(cuda.envCudaVersion));
  return e;
}

}  // namespace kernodeck::gpu
