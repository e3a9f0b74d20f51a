// What an image (or a root filesystem) holds of CUDA besides its Python: a toolkit
// (/usr/local/cuda*/version.json), cuda-compat libraries and their .note.cuda.fwd_compatibility,
// and the config's CUDA_VERSION / NVIDIA_REQUIRE_CUDA. gpu/cuda_build.h judges it.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "kernodeck/gpu/cuda_build.h"
#include "kernodeck/oci/fs_view.h"

namespace kernodeck::os {

// The largest cuda-compat libcuda.so read whole from a root filesystem directory to find its
// note (a real one is about 30 to 90 MiB); an image's layers keep only the note's bytes.
inline constexpr uint64_t kMaxCompatLibraryBytes = uint64_t(256) << 20;

// The image's CUDA side, from the view and the config's environment `env`.
gpu::ImageCuda readImageCuda(const oci::FsView& view, const std::map<std::string, std::string>& env);

}  // namespace kernodeck::os
