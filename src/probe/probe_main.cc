// kernodeck-probe: the probe alone. Two builds: the statically linked one (KERNODECK_PROBE_STATIC,
// the default build) that runs inside the judged image and loads nothing from it, and the
// probe-only build for machines that have LibTorch but not Kernodeck's other build dependencies
// (scripts/gpu-check), which computes with the LibTorch plugin.
#include <exception>
#include <string>
#include <vector>

#include "kernodeck/probe/probe_cli.h"

int main(int argc, char** argv) {
  try {
#ifdef KERNODECK_PROBE_STATIC
    // The statically linked build that runs inside the judged image: it loads nothing from it.
    const auto mode = kernodeck::probe::Mode::Static;
#else
    const auto mode = kernodeck::probe::Mode::Probe;
#endif
    return kernodeck::probe::probeCommand(std::vector<std::string>(argv + 1, argv + argc), "kernodeck-probe", {}, mode);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernodeck-probe: internal error: %s\n", e.what());
    return 3;
  }
}
