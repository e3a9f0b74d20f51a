// Will a library's GPU code run on a GPU? The rule, per library of an image's gpu_code
// (expectation.h), shared by `audit --gpu`, the hook at container start, the probe and `fleet
// summary`:
// - SASS (machine code) sm_Xy runs on compute capability X.z for z >= y; the arch-specific
//   sm_Xya only on X.y itself; the family-specific sm_Xyf on X.z for z >= y (sm_100f on 10.0 and
//   10.3, sm_120f on 12.0 and 12.1).
// - PTX compute_Xy is JIT-compiled by the driver for any X.y or newer (compute_Xya only for
//   X.y, compute_Xyf for X.z, z >= y): it runs, at a first-start cost (minutes for large
//   libraries) and with a JIT cache to size (CUDA_CACHE_MAXSIZE).
// - Neither: "no kernel image is available for execution on the device".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/gpu/expectation.h"

namespace kernodeck::gpu {

// How code reaches a GPU: its SASS, only PTX through the driver's JIT, not at all; Unknown when
// nothing the library lists is an architecture name (or the capability is not "X.y").
enum class CodeFit { Sass, Ptx, None, Unknown };
const char* toString(CodeFit f);  // "sass", "ptx", "none", "unknown"

// One entry of a SASS or PTX list ("sm_90a", "compute_90") against a compute capability ("9.0"):
// Sass or Ptx when it runs there, None when it does not, Unknown when the entry is not an
// architecture name.
CodeFit entryFits(std::string_view entry, std::string_view capability);

// One library judged against one GPU.
struct LibraryVerdict {
  std::string library, layer;
  CodeFit fit = CodeFit::Unknown;
  std::vector<std::string> sass, ptx;  // what it has
  std::vector<std::string> covering;   // the entries that run there (SASS for Sass, PTX for Ptx)
};

// Every library of `code` against a GPU of compute capability `capability`, in the list's order.
std::vector<LibraryVerdict> judgeGpuCode(const std::vector<GpuCode>& code, std::string_view capability);

// The worst fit of a set of verdicts (None > Ptx > Sass), ignoring Unknown ones; Unknown when
// every one is.
CodeFit worstFit(const std::vector<LibraryVerdict>& verdicts);

// What a GPU of `capability` needs, for messages: "SASS sm_100 or sm_100a, or PTX compute_100 or
// older"; "SASS sm_80 to sm_89, or PTX compute_89 or older".
std::string codeNeededBy(std::string_view capability);

// One sentence about a verdict, naming the library and the GPU (`gpu`: "B200 (10.0)").
std::string explainVerdict(const LibraryVerdict& v, std::string_view gpu, std::string_view capability);

// The image's GPU code against every judged generation (gpu_models.h: judgedGenerations), for
// reports and `fleet summary`: per generation "sass" (every capability of it through SASS),
// "ptx" (every one, some only through PTX), "partial" (some capabilities cannot run it),
// "none" (no capability can), each with its capabilities' fits. Empty when `code` lists nothing.
nlohmann::json generationSupport(const std::vector<GpuCode>& code);

}  // namespace kernodeck::gpu
