// The interface between Kernodeck and its LibTorch plugin, libkernodeck_torch.so: the
// one header both sides of dlopen compile against.
//
// The plugin exports one symbol, kEntrySymbol, returning a PluginAbi: a versioned
// struct of function pointers. The loader (plugin.cc) checks abi_version and
// struct_size before it calls anything, so a plugin from another build is refused
// with an error naming its file and both versions instead of crashing. The plugin
// fills the struct in plugin_entry.cc from the functions declared below, so a
// signature that differs on either side fails to compile (or, for the functions'
// definitions, to link: the plugin is linked with --no-undefined).
//
// What crosses is plain C data (numbers, NUL-terminated strings, arrays with their
// length) and callbacks into the loader, which copies what it keeps before the
// callback returns; no std::string, container or exception crosses. That matters
// beyond tidiness: LibTorch's CMake flags (TORCH_CXX_FLAGS, possibly
// -D_GLIBCXX_USE_CXX11_ABI=0 for a pip wheel) apply to the plugin's sources only,
// so the two sides may disagree on std::string's layout.
//
// The one exception is report::Report, filled by the two resume entries (its
// steps and findings are built inside the training code). It is passed by pointer
// and only used when the plugin's cxx_build equals the loader's (same compiler
// version and standard-library ABI), which holds for a plugin built by the same
// CMake build as the binary, the only way this project builds one; otherwise the
// resume commands report the mismatch. The probe-only build's plugin has no
// resume or .pt entries (null pointers).
//
// The namespace is kernodeck::libtorch, not kernodeck::torch, which would hide
// LibTorch's ::torch inside kernodeck's namespaces in the plugin's sources.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kernodeck::report {
class Report;
}

namespace kernodeck::libtorch {

// Raised whenever a member changes type or meaning; adding a member at the end
// raises it too (a loader must not read past a smaller struct).
inline constexpr uint32_t kAbiVersion = 1;

// The exported entry point, `extern "C" const PluginAbi* kdk_torch_plugin_abi()`.
inline constexpr const char* kEntrySymbol = "kdk_torch_plugin_abi";

#define KDK_STRINGIFY2(x) #x
#define KDK_STRINGIFY(x) KDK_STRINGIFY2(x)
// Compiler and C++ standard-library ABI of the translation unit that expands it:
// both sides must agree for report::Report to cross.
#if defined(_GLIBCXX_USE_CXX11_ABI)
#define KDK_TORCH_CXX_BUILD "c++ " __VERSION__ " cxx11-abi=" KDK_STRINGIFY(_GLIBCXX_USE_CXX11_ABI)
#else
#define KDK_TORCH_CXX_BUILD "c++ " __VERSION__
#endif

// A string handed to the loader: valid only during the call; `n` bytes, not NUL-terminated.
using StringSink = void (*)(void* ctx, const char* s, size_t n);

// What the plugin's LibTorch is (probe::LibtorchInfo without the device names).
struct TorchInfo {
  int cuda_build = 0, hip_build = 0;  // LibTorch built with CUDA / HIP
  int cuda_available = 0;             // at run time
  int cuda_devices = 0;
};

// One device's outcome of the probe's computation (probe::ComputeResult); the
// strings are valid only during the ComputeSink call.
struct ComputeRow {
  const char* device;
  const char* device_name;
  int ok;
  const char* error;  // empty when ok
  double max_abs_diff, max_rel_diff, checksum;
  int finite;
};
using ComputeSink = void (*)(void* ctx, const ComputeRow* row);

// One tensor of a .pt file (record::Tensor); arrays valid only during the TensorSink call.
struct TensorRow {
  const char* name;
  const char* dtype;
  const int64_t* shape;
  size_t rank;
  const double* values;  // C order
  size_t count;
};
using TensorSink = void (*)(void* ctx, const TensorRow* row);

// probe::ResumeOptions.
struct ResumeArgs {
  int steps, at;
  double atol;
  unsigned seed;
  const char* self;  // this binary, to continue in a fresh process
};

// The plugin's entry points. Each member is non-null unless said otherwise.
struct PluginAbi {
  uint32_t abi_version;   // kAbiVersion of the plugin's build
  uint32_t struct_size;   // sizeof(PluginAbi) of the plugin's build
  const char* cxx_build;  // KDK_TORCH_CXX_BUILD of the plugin's build

  // Fills `out`; the LibTorch version goes to `version`.
  void (*torch_info)(TorchInfo* out, void* ctx, StringSink version);
  // The probe's seeded matmul on each of `devices` ("cpu", "cuda"), one row per device checked.
  void (*compute)(const char* const* devices, size_t device_count, double atol, double rtol, int n, unsigned seed,
                  void* ctx, ComputeSink row);
  // The training-resume check and checkpoint inspection, into `out` (null in a probe-only plugin).
  void (*resume_check)(const ResumeArgs* args, report::Report* out);
  void (*resume_inspect)(const char* checkpoint, report::Report* out);
  // `kernodeck resume _continue`: the exit status (null in a probe-only plugin).
  int (*resume_continue)(const char* checkpoint, int steps, unsigned seed, const char* out);
  // Tensors of a torch.save file: 0 and one `tensor` call each, or non-zero and one
  // `error` call saying why (null in a probe-only plugin).
  int (*parse_pt)(const char* bytes, size_t size, void* ctx, TensorSink tensor, StringSink error);
};

// The plugin's side: the functions plugin_entry.cc puts into its PluginAbi, each
// defined in the plugin source that includes LibTorch (torch_compute.cc,
// resume_torch.cc, pt_torch.cc).
namespace entry {
void torchInfo(TorchInfo* out, void* ctx, StringSink version);
void compute(const char* const* devices, size_t device_count, double atol, double rtol, int n, unsigned seed, void* ctx,
             ComputeSink row);
void resumeCheck(const ResumeArgs* args, report::Report* out);
void resumeInspect(const char* checkpoint, report::Report* out);
int resumeContinue(const char* checkpoint, int steps, unsigned seed, const char* out);
int parsePt(const char* bytes, size_t size, void* ctx, TensorSink tensor, StringSink error);
}  // namespace entry

}  // namespace kernodeck::libtorch
