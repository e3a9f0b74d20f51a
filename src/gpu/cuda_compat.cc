#include "kernodeck/gpu/cuda_compat.h"

#include "kernodeck/gpu/gpu_code_judge.h"

#include "kernodeck/util/strings.h"

namespace kernodeck::gpu {

namespace {

// The next dot-separated component of `v` from `at` ("0" past the end), and `at` moved past it.
std::string_view nextComponent(std::string_view v, size_t& at) {
  if (at > v.size()) return "0";
  size_t dot = v.find('.', at);
  std::string_view c = v.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at);
  at = dot == std::string_view::npos ? v.size() + 1 : dot + 1;
  return c;
}

}  // namespace

// Component by component, without allocating: the hook compares a driver version with every row
// of the CUDA table on each container start.
int compareVersions(std::string_view a, std::string_view b) {
  size_t ia = 0, ib = 0;
  while (ia <= a.size() || ib <= b.size()) {
    std::string_view x = nextComponent(a, ia), y = nextComponent(b, ib);
    auto nx = util::parseUint(x), ny = util::parseUint(y);
    if (nx && ny) {
      if (*nx != *ny) return *nx < *ny ? -1 : 1;
    } else if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  return 0;
}

std::string majorMinor(std::string_view v) {
  auto p = util::split(v, '.');
  if (p.size() < 2) return std::string(v) + (p.size() == 1 && !v.empty() ? ".0" : "");
  return p[0] + "." + p[1];
}

const std::vector<CudaDriverRow>& cudaDriverTable() {
  // CUDA toolkit release notes, "CUDA Toolkit and Corresponding Driver Versions" (Linux, GA).
  static const std::vector<CudaDriverRow> table = {
      {"10.0", "410.48"},    {"10.1", "418.39"},    {"10.2", "440.33"},    {"11.0", "450.36.06"}, {"11.1", "455.23"},
      {"11.2", "460.27.03"}, {"11.3", "465.19.01"}, {"11.4", "470.42.01"}, {"11.5", "495.29.05"}, {"11.6", "510.39.01"},
      {"11.7", "515.43.04"}, {"11.8", "520.61.05"}, {"12.0", "525.60.13"}, {"12.1", "530.30.02"}, {"12.2", "535.54.03"},
      {"12.3", "545.23.06"}, {"12.4", "550.54.14"}, {"12.5", "555.42.02"}, {"12.6", "560.28.03"}, {"12.8", "570.26"},
      {"12.9", "575.51.03"}, {"13.0", "580.65.06"},
  };
  return table;
}

namespace {

// Minimum driver for minor-version compatibility within a CUDA major release.
const char* minorCompatFloor(std::string_view major) {
  if (major == "11") return "450.80.02";
  if (major == "12") return "525.60.13";
  if (major == "13") return "580.65.06";
  return nullptr;
}

}  // namespace

std::string maxCudaForDriver(std::string_view driver) {
  const CudaDriverRow* best = nullptr;
  for (const auto& row : cudaDriverTable())
    if (compareVersions(driver, row.minDriver) >= 0) best = &row;
  return best ? majorMinor(best->cuda) : std::string();
}

const char* toString(CudaSupport s) {
  switch (s) {
    case CudaSupport::Native: return "native";
    case CudaSupport::MinorVersionCompat: return "minor_version_compat";
    case CudaSupport::ForwardCompat: return "forward_compat";
    case CudaSupport::Unsupported: return "unsupported";
  }
  return "?";
}

CudaVerdict checkCuda(std::string_view driver, std::string_view cuda, const std::vector<std::string>& compatBranches) {
  std::string want = majorMinor(cuda);
  std::string max = maxCudaForDriver(driver);
  if (!max.empty() && compareVersions(want, max) <= 0)
    return {CudaSupport::Native, "driver " + std::string(driver) + " supports CUDA up to " + max};
  std::string major = util::split(want, '.')[0];
  const char* floor = minorCompatFloor(major);
  if (floor && !max.empty() && util::split(max, '.')[0] == major && compareVersions(driver, floor) >= 0)
    return {CudaSupport::MinorVersionCompat, "driver " + std::string(driver) + " runs CUDA " + want +
                                                 " through minor-version compatibility (no newer PTX JIT)"};
  std::string branch = util::split(driver, '.')[0];
  for (const auto& b : compatBranches)
    if (b == branch)
      return {CudaSupport::ForwardCompat, "the image's cuda-compat libraries support driver branch " + branch};
  return {CudaSupport::Unsupported, "driver " + std::string(driver) + " supports CUDA up to " +
                                        (max.empty() ? std::string("none known") : max) + ", the image needs " + want};
}

std::optional<ComputeCapability> parseComputeCapability(std::string_view arch) {
  size_t dot = arch.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto ma = util::parseUint(arch.substr(0, dot)), mi = util::parseUint(arch.substr(dot + 1));
  if (!ma || !mi || *ma > 99 || *mi > 9) return std::nullopt;
  return ComputeCapability{static_cast<int>(*ma), static_cast<int>(*mi)};
}

std::string smName(std::string_view gpuArch) {
  auto c = parseComputeCapability(gpuArch);
  return c ? "sm_" + std::to_string(c->major) + std::to_string(c->minor) : "";
}

std::optional<bool> archRunsOn(const std::vector<std::string>& archList, std::string_view gpuArch) {
  if (!parseComputeCapability(gpuArch) || archList.empty()) return std::nullopt;
  bool known = false;
  for (std::string_view a : archList) {
    CodeFit f = entryFits(a, gpuArch);
    if (f == CodeFit::Sass || f == CodeFit::Ptx) return true;
    known |= f == CodeFit::None;
  }
  return known ? std::optional<bool>(false) : std::nullopt;
}

}  // namespace kernodeck::gpu
