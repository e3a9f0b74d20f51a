// kernodeck-probe: the probe alone, for machines that have LibTorch but not
// Kernodeck's other build dependencies (scripts/gpu-check).
#include <exception>
#include <string>
#include <vector>

#include "kernodeck/probe/probe_cli.h"

int main(int argc, char** argv) {
  try {
    return kernodeck::probe::probeCommand(std::vector<std::string>(argv + 1, argv + argc), "kernodeck-probe");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernodeck-probe: internal error: %s\n", e.what());
    return 3;
  }
}
