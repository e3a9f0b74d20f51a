// NVIDIA GPUs by name and by PCI device id, with their compute capability and generation: what
// `audit --gpu` accepts, what the host tables (host::inferArchAndBrand, host::archForPciDevice)
// map a node's GPUs with. Data-centre and workstation GPUs from Volta to Blackwell. The tables are
// data (gpu_models.cc says where each comes from); extend them by adding a row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::gpu {

// A GPU that kernels are judged against: a compute capability ("9.0") and how it was named.
struct GpuTarget {
  std::string capability;  // "10.0"
  std::string name;        // "B200", or "sm_100" / "10.0" when named by its architecture
};

// "9.0", "sm_90" (also "sm_90a"/"sm_100f": the GPU they run on), or a model name ("H100",
// "NVIDIA B200", "RTX 5090", "RTX PRO 6000 Blackwell"; case and spacing are free). An
// Error::Invalid naming `text` and listing the accepted forms otherwise.
Result<GpuTarget> parseGpuTarget(std::string_view text);

// Compute capability of a model name as drivers and nvidia-smi print it ("NVIDIA H100 80GB HBM3",
// "Tesla V100-SXM2-16GB", "NVIDIA RTX 6000 Ada Generation"); empty when no row matches.
std::string capabilityForModel(std::string_view model);
// The brand host::inferArchAndBrand gives the model ("nvidia", "tesla", "geforce", "quadro"); empty
// when the row does not say.
std::string brandForModel(std::string_view model);

// Compute capability and model name of an NVIDIA PCI device id (0x2901: "10.0", "B200"); empty
// capability when the id is not in the table.
struct PciGpu {
  const char* capability = "";
  const char* model = "";
};
PciGpu gpuForPciDevice(uint32_t device);

// The generation of a compute capability: "Volta" (7.0, 7.2), "Turing" (7.5), "Ampere" (8.0,
// 8.6, 8.7), "Ada" (8.9), "Hopper" (9.0), "Blackwell" (10.x, 11.0, 12.x); older ones by their
// name too ("Pascal", "Maxwell", "Kepler"); empty when unknown.
std::string generationOf(std::string_view capability);

// The generations a report judges an image's GPU code against, oldest first, each with the
// compute capabilities of its data-centre and workstation GPUs (Jetson's left out).
struct Generation {
  const char* name;
  std::vector<const char*> capabilities;
};
const std::vector<Generation>& judgedGenerations();

// The accepted forms of a --gpu value, for usage messages.
std::string gpuTargetForms();

}  // namespace kernodeck::gpu
