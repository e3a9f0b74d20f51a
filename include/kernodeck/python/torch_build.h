// The torch build of an image's Python, read without running Python: torch/version.py and the
// nvidia-*-cuNN wheels. With the image's CUDA side (os/image_cuda.h) it becomes the image's
// kernodeck.expect/v1 (gpu/cuda_build.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/python/environment.h"

namespace kernodeck::python {

struct TorchVersionPy {
  std::string version, cuda, hip, gitVersion;
  bool debug = false;
};
// Parses torch/version.py assignments (`__version__ = '2.1.0+cu121'`, `cuda: Optional[str] = '12.1'`).
std::optional<TorchVersionPy> parseTorchVersionPy(std::string_view text);

// What the image's Python environments say of its torch build: torch/version.py of the first
// environment that has torch, and every environment's nvidia-* wheels. gpu/cuda_build.h judges
// it together with the image's CUDA side (os/image_cuda.h).
struct TorchBuild {
  std::optional<TorchVersionPy> torch;
  std::string torchLocation;                        // package directory of the torch found
  std::map<std::string, std::string> nvidiaWheels;  // "nvidia-cuda-runtime-cu12" -> "12.1.105"
};

TorchBuild readTorchBuild(const oci::FsView& view, const std::vector<PythonEnv>& envs);

}  // namespace kernodeck::python
