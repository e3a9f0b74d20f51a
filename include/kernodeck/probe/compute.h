// The probe's small computation, behind an interface that does not include
// LibTorch: only src/probe/torch_compute.cc does.
#pragma once

#include <string>
#include <vector>

namespace kernodeck::probe {

// Declared before the run; the default is documented in docs/probe.md.
struct Tolerance {
  double atol = 1e-3;
  double rtol = 1e-3;
};

struct ComputeResult {
  std::string device;  // "cpu", "cuda:0", ...
  std::string deviceName;
  bool ok = false;
  std::string error;      // first error, when !ok
  double maxAbsDiff = 0;  // against the CPU reference
  double maxRelDiff = 0;
  double checksum = 0;  // sum of the product, on this device
  bool finite = true;
};

struct LibtorchInfo {
  bool available = false;  // built with LibTorch
  std::string version;
  bool cudaBuild = false, hipBuild = false;
  bool cudaAvailable = false;  // at run time
  int cudaDevices = 0;
  std::vector<std::string> deviceNames;
  std::string unavailable;  // why not, when !available (which plugin is missing, what it removes)
};

LibtorchInfo libtorchInfo();

// Seeded matmul (n x n, float32) and a sum reduction on each device, compared
// with the CPU result under `tol`. Devices: "cpu", "cuda" (every visible GPU).
std::vector<ComputeResult> runCompute(const std::vector<std::string>& devices, const Tolerance& tol, int n = 256,
                                      unsigned seed = 1234);

}  // namespace kernodeck::probe
