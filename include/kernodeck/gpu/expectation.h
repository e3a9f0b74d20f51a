// kernodeck.expect/v1: what an image needs from the GPU node, written by
// `kernodeck audit --expect-out` (or by hand) and optionally baked into the
// image at /etc/kernodeck/expect.json. See docs/expect-schema.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/gpu/cuda_fwd_note.h"
#include "kernodeck/util/result.h"

namespace kernodeck::gpu {

// A forward-compatibility libcuda.so of the image and its .note.cuda.fwd_compatibility.
struct CompatLibraryNote {
  std::string path;    // "/usr/local/cuda-13.1/compat/libcuda.so.590.44.01"
  std::string driver;  // the driver version of its name: "590.44.01"
  FwdCompatNote note;
};

// The GPU code one library of the image carries, as its ELF's fatbins list it (cuobjdump
// --list-elf / --list-ptx): machine code per architecture ("sm_80", "sm_90a", "sm_100f") and PTX
// per virtual architecture ("compute_90"). Read by `audit` (oci layer scan), judged against a GPU
// by gpu::archRunsOn's rule (per library: the hook, the probe, `audit --gpu`).
struct GpuCode {
  std::string library;            // its path in the image: "/usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so"
  std::string layer;              // the digest of the layer it came from (empty for a rootfs: directory)
  std::vector<std::string> sass;  // sorted, unique
  std::vector<std::string> ptx;   // sorted, unique
  bool compressed = false;        // some entry's payload is compressed (not read)
};

struct Expectation {
  std::string accelerator;  // "cuda", "rocm", "cpu" or empty
  std::string imageDigest;
  std::string torchVersion;  // "2.1.0+cu121"
  std::string torchCuda;     // CUDA the torch build targets ("12.1"), empty for CPU/ROCm builds
  std::string torchHip;
  std::string cudaRuntime;  // nvidia-cuda-runtime wheel or toolkit version
  // Host driver branches the image's cuda-compat libraries support: their notes' `driver` lists
  // (a library whose note could not be read counts its own branch, from its name).
  std::vector<std::string> compatDriverBranches;
  std::vector<CompatLibraryNote> compatLibraries;  // the libraries whose note was read
  std::vector<std::string> nvidiaRequire;          // NVIDIA_REQUIRE_* values
  std::vector<std::string> torchArchList;          // "sm_80", "sm_90" when known
  // Every library of the image with GPU code (gpu_code), torch's own among them; empty when the
  // audit read none (or an older audit wrote the file).
  std::vector<GpuCode> gpuCode;

  nlohmann::json toJson() const;
};

// kernodeck.expect/v1 and its one reader: from the text (nesting bounded, then
// util::parseUntrustedJson), or from JSON already parsed (inside a host record, a cached audit
// result). An absent or null field is empty; a wrong type is an Error::Invalid naming the field.
Result<Expectation> parseExpectation(std::string_view json);
Result<Expectation> expectationFromJson(const nlohmann::json& j);

}  // namespace kernodeck::gpu
