// The CUDA forward-compatibility libraries a container holds (/usr/local/cuda*/compat/
// libcuda.so.<driver>, the cuda-compat package) and what their `.note.cuda.fwd_compatibility`
// notes say (gpu/cuda_fwd_note.h), read from the container's root as NVIDIA Container Toolkit
// 1.20's enable-cuda-compat hook reads them, without loading them: links are resolved inside the
// root, and only the ELF headers and the note are read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernodeck/gpu/cuda_fwd_note.h"

namespace kernodeck::oci {
class FsView;
}

namespace kernodeck::hook {

struct CompatLibrary {
  std::string path;                        // in the container: "/usr/local/cuda-12.9/compat/libcuda.so.575.57.08"
  std::string driver;                      // the driver version of its name: "575.57.08"
  std::optional<gpu::FwdCompatNote> note;  // none: no note (the toolkit then never uses it)
  std::string problem;                     // why the note could not be read, when it could not
};

// The compat libraries under `root` (a container's root directory, seen through `view`, a
// DirView of it), at most 16.
std::vector<CompatLibrary> readCompatLibraries(const oci::FsView& view, const std::string& root);

// The library at `resolved` (a path the view resolved inside the root, relative to it), named
// `name`, opened beneath the root's directory `rootFd` by util::openInRoot: whatever changed
// since it was resolved (a directory swapped for a link to the host), nothing outside the root is
// opened. The use half of readCompatLibraries' check and use, apart for the tests.
CompatLibrary readCompatLibrary(int rootFd, const std::string& resolved, const std::string& name);

}  // namespace kernodeck::hook
