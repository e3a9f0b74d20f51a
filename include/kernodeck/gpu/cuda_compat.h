// Which CUDA versions an NVIDIA driver can run.
//
// The table (CUDA toolkit release -> minimum Linux driver) is data, taken from
// the CUDA toolkit release notes; extend it by adding a row. On top of it:
// minor-version compatibility (any 11.x from 450.80.02, 12.x from 525.60.13,
// 13.x from 580.65.06, with the limits NVIDIA documents: no newer PTX JIT) and
// forward compatibility through an image's cuda-compat libraries, which only
// work on the host driver branches the compat package names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernodeck::gpu {

// Compares dotted numeric versions ("470.57.02" vs "470.8"): -1, 0, 1.
// Missing components count as 0; non-numeric components compare as strings.
int compareVersions(std::string_view a, std::string_view b);
// "12.1.105" -> "12.1"
std::string majorMinor(std::string_view v);

struct CudaDriverRow {
  const char* cuda;       // toolkit release, major.minor[.patch]
  const char* minDriver;  // minimum Linux x86_64 driver
};
const std::vector<CudaDriverRow>& cudaDriverTable();

// The newest CUDA (major.minor) the driver supports natively, as nvidia-smi
// prints it; empty for drivers older than the table.
std::string maxCudaForDriver(std::string_view driver);

enum class CudaSupport { Native, MinorVersionCompat, ForwardCompat, Unsupported };
const char* toString(CudaSupport s);

struct CudaVerdict {
  CudaSupport support = CudaSupport::Unsupported;
  std::string explanation;  // one plain sentence
};

// Can `driver` run code built for `cuda`? compatBranches: the host driver
// branches (e.g. "470", "535") an image's cuda-compat package supports, if any.
CudaVerdict checkCuda(std::string_view driver, std::string_view cuda,
                      const std::vector<std::string>& compatBranches = {});

// Can a torch built for `archList` (torch.cuda.get_arch_list(): "sm_80", "sm_90a",
// "compute_90") run kernels on a GPU of compute capability `gpuArch` ("8.9")? Machine code for
// sm_Xy runs on X.z for z >= y (not the "a" variants, which run on their exact GPU only); PTX
// (compute_Xy) JIT-compiles for any X.y or newer. nullopt when either side is unknown.
std::optional<bool> archRunsOn(const std::vector<std::string>& archList, std::string_view gpuArch);
// A compute capability, "8.9" -> {8, 9}: the one parser of that form (major up to 99, minor one
// digit); nullopt for anything else.
struct ComputeCapability {
  int major = -1, minor = -1;
};
std::optional<ComputeCapability> parseComputeCapability(std::string_view text);

// "9.0" -> "sm_90"; empty when not of that shape.
std::string smName(std::string_view gpuArch);

}  // namespace kernodeck::gpu
