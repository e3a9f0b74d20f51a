// The torch/CUDA build of an image, read without running Python:
// torch/version.py, nvidia-*-cuNN wheels, a CUDA toolkit (/usr/local/cuda*/
// version.json), cuda-compat libraries and the config's CUDA_VERSION /
// NVIDIA_REQUIRE_CUDA. The result becomes the image's kernodeck.expect/v1.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/gpu/expectation.h"
#include "kernodeck/oci/fs_view.h"
#include "kernodeck/python/environment.h"

namespace kernodeck::python {

struct TorchVersionPy {
  std::string version, cuda, hip, gitVersion;
  bool debug = false;
};
// Parses torch/version.py assignments (`__version__ = '2.1.0+cu121'`, `cuda: Optional[str] = '12.1'`).
std::optional<TorchVersionPy> parseTorchVersionPy(std::string_view text);

struct CudaBuild {
  std::optional<TorchVersionPy> torch;
  std::string torchLocation;                        // package directory of the torch found
  std::map<std::string, std::string> nvidiaWheels;  // "nvidia-cuda-runtime-cu12" -> "12.1.105"
  std::string toolkit;                              // /usr/local/cuda*/version.json
  // Host driver branches the cuda-compat libraries support: their .note.cuda.fwd_compatibility
  // `driver` lists; the branch of the name (compat/libcuda.so.<driver>) only for a library whose
  // content was not read (an image's view holds the bytes the note is read from, whatever the
  // library's size: gpu/fwd_note_capture.h; a directory's file is read up to kMaxCompatLibraryBytes).
  std::vector<std::string> compatDriverBranches;
  std::vector<gpu::CompatLibraryNote> compatLibraries;  // the libraries whose note was read
  std::string envCudaVersion, envRequireCuda;
  std::vector<std::string> inconsistencies;  // plain sentences

  gpu::Expectation expectation(const std::string& imageDigest) const;
};

// The largest cuda-compat libcuda.so read whole from a root filesystem directory to find its
// note (a real one is about 30 to 90 MiB); an image's layers keep only the note's bytes.
inline constexpr uint64_t kMaxCompatLibraryBytes = uint64_t(256) << 20;

CudaBuild readCudaBuild(const oci::FsView& view, const std::vector<PythonEnv>& envs,
                        const std::map<std::string, std::string>& env);

}  // namespace kernodeck::python
