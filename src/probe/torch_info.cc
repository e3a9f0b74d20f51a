// The one translation unit that names LibTorch for now: its version, for
// `kernodeck version`. The probe (see ARCHITECTURE.md) grows here.
#include <torch/version.h>

namespace kernodeck::probe {

const char* libtorchVersion() { return TORCH_VERSION; }

}  // namespace kernodeck::probe
