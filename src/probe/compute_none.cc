// Built without LibTorch (-DKERNODECK_WITH_TORCH=OFF): the probe reports that
// it cannot compute rather than pretending to.
#include "kernodeck/probe/compute.h"

namespace kernodeck::probe {

LibtorchInfo libtorchInfo() { return {}; }

std::vector<ComputeResult> runCompute(const std::vector<std::string>&, const Tolerance&, int, unsigned) { return {}; }

}  // namespace kernodeck::probe
