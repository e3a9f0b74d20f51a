// The only translation unit of the probe that includes LibTorch.
#include <torch/torch.h>
#include <torch/version.h>

#include "kernodeck/libtorch/abi.h"
#include "kernodeck/probe/compute.h"

namespace kernodeck::probe::torchimpl {

LibtorchInfo libtorchInfo() {
  LibtorchInfo i;
  i.available = true;
  i.version = TORCH_VERSION;
  i.cudaBuild = torch::cuda::is_available() || at::hasCUDA();
  i.hipBuild = at::hasHIP();
  try {
    i.cudaAvailable = torch::cuda::is_available();
    i.cudaDevices = i.cudaAvailable ? static_cast<int>(torch::cuda::device_count()) : 0;
  } catch (const std::exception&) {
    i.cudaAvailable = false;
  }
  return i;
}

namespace {

struct Outcome {
  torch::Tensor product;
  double checksum = 0;
};

Outcome compute(const torch::Tensor& a, const torch::Tensor& b, const torch::Device& dev) {
  torch::NoGradGuard ng;
  auto p = torch::matmul(a.to(dev), b.to(dev));
  Outcome o;
  o.checksum = p.sum().to(torch::kCPU).item<double>();
  o.product = p.to(torch::kCPU);
  return o;
}

}  // namespace

std::vector<ComputeResult> runCompute(const std::vector<std::string>& devices, const Tolerance& tol, int n,
                                      unsigned seed) {
  std::vector<ComputeResult> out;
  torch::manual_seed(seed);
  auto a = torch::randn({n, n}, torch::kFloat32);
  auto b = torch::randn({n, n}, torch::kFloat32);
  Outcome ref;
  try {
    ref = compute(a, b, torch::Device(torch::kCPU));
  } catch (const std::exception& e) {
    out.push_back(ComputeResult{"cpu", "cpu", false, std::string("CPU reference failed: ") + e.what()});
    return out;
  }
  auto check = [&](const std::string& name, const std::string& devName, const torch::Device& dev) {
    ComputeResult r;
    r.device = name;
    r.deviceName = devName;
    try {
      Outcome o = dev.is_cpu() ? ref : compute(a, b, dev);
      r.checksum = o.checksum;
      r.finite = torch::isfinite(o.product).all().item<bool>() && std::isfinite(o.checksum);
      auto diff = (o.product - ref.product).abs();
      r.maxAbsDiff = diff.max().item<double>();
      r.maxRelDiff = (diff / (ref.product.abs() + 1e-12)).max().item<double>();
      bool within = torch::allclose(o.product, ref.product, tol.rtol, tol.atol);
      r.ok = r.finite && within;
      if (!r.finite)
        r.error = "non-finite values in the result on " + name;
      else if (!within)
        r.error = "result on " + name + " differs from the CPU beyond the declared tolerance (max abs diff " +
                  std::to_string(r.maxAbsDiff) + ")";
    } catch (const std::exception& e) {
      r.ok = false;
      r.error = "computation on " + name + " failed: " + std::string(e.what()).substr(0, 300);
    }
    out.push_back(r);
  };
  for (const auto& d : devices) {
    if (d == "cpu") {
      check("cpu", "cpu", torch::Device(torch::kCPU));
    } else if (d == "cuda") {
      int count = torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
      if (count == 0) {
        out.push_back(ComputeResult{"cuda", "", false, "no CUDA device is available to LibTorch"});
        continue;
      }
      // TF32 would change float32 matmul results on Ampere and later; the check wants IEEE float32.
      at::globalContext().setAllowTF32CuBLAS(false);
      for (int i = 0; i < count; ++i)
        check("cuda:" + std::to_string(i), "cuda:" + std::to_string(i),
              torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(i)));
    }
  }
  return out;
}

}  // namespace kernodeck::probe::torchimpl

// The plugin's entry points for the probe (see libtorch/abi.h): plain C data across dlopen.
namespace kernodeck::libtorch::entry {

void torchInfo(TorchInfo* out, void* ctx, StringSink version) {
  probe::LibtorchInfo i = probe::torchimpl::libtorchInfo();
  out->cuda_build = i.cudaBuild;
  out->hip_build = i.hipBuild;
  out->cuda_available = i.cudaAvailable;
  out->cuda_devices = i.cudaDevices;
  version(ctx, i.version.data(), i.version.size());
}

void compute(const char* const* devices, size_t device_count, double atol, double rtol, int n, unsigned seed, void* ctx,
             ComputeSink row) {
  std::vector<std::string> names(devices, devices + device_count);
  for (const auto& r : probe::torchimpl::runCompute(names, probe::Tolerance{atol, rtol}, n, seed)) {
    ComputeRow c{r.device.c_str(), r.deviceName.c_str(), r.ok,       r.error.c_str(),
                 r.maxAbsDiff,     r.maxRelDiff,         r.checksum, r.finite};
    row(ctx, &c);
  }
}

}  // namespace kernodeck::libtorch::entry
