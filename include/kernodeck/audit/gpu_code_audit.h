// The GPU code of an image's libraries, as the layer walk read it (gpu/gpu_code_scan.h: the
// fatbins of every ELF file, kept in place of the file's bytes): the report's `gpu_code` section
// (one entry per library: path, layer, SASS, PTX, compressed), the expectation's `gpu_code` and
// `torch.arch_list` (from torch's own libraries, named as torch.cuda.get_arch_list() names them),
// and a `gpu.fatbin.malformed` finding per library whose fatbins cuobjdump would not read whole.
#pragma once

#include <string>
#include <vector>

#include "kernodeck/gpu/expectation.h"
#include "kernodeck/oci/fs_view.h"
#include "kernodeck/report/report.h"

namespace kernodeck::audit {

struct GpuCodeContext {
  std::vector<std::string> files;         // paths whose layer entry kept GPU code, any order
  std::vector<std::string> layerDigests;  // by layer index
  std::string torchLocation;              // the directory holding the torch package ("" when none)
};

// Reads the kept GPU code of `ctx.files` still in the view (a later layer may have replaced or
// removed one), fills `e.gpuCode` and `e.torchArchList` (when torch's libraries carry code), and
// adds the section and findings to `r`. Nothing is added for an image without GPU code.
void auditGpuCode(const oci::FsView& v, const GpuCodeContext& ctx, gpu::Expectation& e, report::Report& r);

// torch.cuda.get_arch_list() of a torch whose own libraries carry `sass` and `ptx`: the SASS
// names ("sm_80"), then the PTX names ("compute_90"), each in architecture order.
std::vector<std::string> torchArchList(const std::vector<std::string>& sass, const std::vector<std::string>& ptx);

}  // namespace kernodeck::audit
