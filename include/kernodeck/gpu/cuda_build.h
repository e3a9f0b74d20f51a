// An image's torch/CUDA build as the GPU rules see it: what its Python says of torch
// (python::readTorchBuild reads it), what its CUDA side holds (os::readImageCuda reads it), and
// the two judged together: their inconsistencies and the image's kernodeck.expect/v1.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernodeck/gpu/expectation.h"

namespace kernodeck::gpu {

// What an image's Python says of its torch build; the caller copies python::TorchBuild's fields
// here (python does not use gpu).
struct TorchFacts {
  bool found = false;                               // a torch/version.py was read
  std::string version, cuda, hip;                   // its __version__, cuda and hip
  std::map<std::string, std::string> nvidiaWheels;  // "nvidia-cuda-runtime-cu12" -> "12.1.105"
};

// What an image holds of CUDA besides its Python: a toolkit, cuda-compat libraries and the
// config's CUDA_VERSION / NVIDIA_REQUIRE_CUDA.
struct ImageCuda {
  std::string toolkit;  // /usr/local/cuda*/version.json
  // Host driver branches the cuda-compat libraries support: their .note.cuda.fwd_compatibility
  // `driver` lists; the branch of the name (compat/libcuda.so.<driver>) only for a library whose
  // content was not read (an image's view holds the bytes the note is read from, whatever the
  // library's size: gpu/fwd_note_capture.h; a directory's file is read up to
  // os::kMaxCompatLibraryBytes).
  std::vector<std::string> compatDriverBranches;
  std::vector<CompatLibraryNote> compatLibraries;  // the libraries whose note was read
  std::string envCudaVersion, envRequireCuda;
  std::vector<std::string> inconsistencies;  // plain sentences: notes that cannot be read
};

// Where torch's build disagrees with its own label, the NVIDIA wheels or the image's
// CUDA_VERSION: plain sentences, none when no torch was found.
std::vector<std::string> torchInconsistencies(const TorchFacts& torch, const ImageCuda& cuda);

// The image's kernodeck.expect/v1 from its torch build and its CUDA side.
Expectation expectationOf(const TorchFacts& torch, const ImageCuda& cuda, const std::string& imageDigest);

}  // namespace kernodeck::gpu
