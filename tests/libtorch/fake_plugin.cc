// A stand-in for libkernodeck_torch.so without LibTorch, built by tests/CMakeLists.txt in
// several variants to test the loader's checks (plugin_test.cc):
//   FAKE_ABI_VERSION      the abi_version it declares (default: this build's)
//   FAKE_SIZE_DELTA       added to the struct_size it declares
//   FAKE_CXX_BUILD        the cxx_build it declares (default: this build's)
//   FAKE_NO_ENTRY         exports no entry symbol at all
// Its functions are assigned to the typed members of PluginAbi, so it is checked by the
// compiler like the real plugin.
#include <cstring>
#include <string>

#include "kernodeck/libtorch/abi.h"

#ifndef FAKE_ABI_VERSION
#define FAKE_ABI_VERSION kernodeck::libtorch::kAbiVersion
#endif
#ifndef FAKE_SIZE_DELTA
#define FAKE_SIZE_DELTA 0
#endif
#ifndef FAKE_CXX_BUILD
#define FAKE_CXX_BUILD KDK_TORCH_CXX_BUILD
#endif

#ifdef FAKE_NO_ENTRY
extern "C" __attribute__((visibility("default"))) int kdk_something_else() { return 0; }
#else
namespace {

using namespace kernodeck::libtorch;

void torchInfo(TorchInfo* out, void* ctx, StringSink version) {
  out->cuda_devices = 3;
  version(ctx, "fake-1.0", 8);
}

// One row per device, named after it, ok when it is "cpu".
void compute(const char* const* devices, size_t device_count, double atol, double rtol, int n, unsigned seed, void* ctx,
             ComputeSink row) {
  for (size_t i = 0; i < device_count; ++i) {
    bool cpu = std::strcmp(devices[i], "cpu") == 0;
    ComputeRow r{devices[i], "fake device", cpu, cpu ? "" : "not a fake cpu", atol, rtol, static_cast<double>(n + seed),
                 1};
    row(ctx, &r);
  }
}

void resumeCheck(const ResumeArgs*, kernodeck::report::Report*) {}
void resumeInspect(const char*, kernodeck::report::Report*) {}
int resumeContinue(const char*, int steps, unsigned, const char*) { return steps; }

// A tensor named after the bytes, or an error when they are "bad".
int parsePt(const char* bytes, size_t size, void* ctx, TensorSink tensor, StringSink error) {
  std::string b(bytes, size);
  if (b == "bad") {
    error(ctx, "fake: bad bytes", 15);
    return 1;
  }
  int64_t shape[] = {2};
  double values[] = {1.5, -2};
  TensorRow t{b.c_str(), "float32", shape, 1, values, 2};
  tensor(ctx, &t);
  return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const PluginAbi* kdk_torch_plugin_abi() {
  static const PluginAbi abi{FAKE_ABI_VERSION, static_cast<uint32_t>(sizeof(PluginAbi) + FAKE_SIZE_DELTA),
                             FAKE_CXX_BUILD,   &torchInfo,
                             &compute,         &resumeCheck,
                             &resumeInspect,   &resumeContinue,
                             &parsePt};
  return &abi;
}
#endif
