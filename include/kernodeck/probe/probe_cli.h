// The probe's command line, shared by `kernodeck probe` and the standalone
// `kernodeck-probe` that scripts/gpu-check builds on a GPU machine with only
// LibTorch and header-only libraries (hence no Boost here).
#pragma once

#include <string>
#include <vector>

#include "kernodeck/probe/probe.h"

namespace kernodeck::probe {

// What the command runs, and where (docs/probe.md, "Trust boundary").
enum class Mode {
  Probe,   // `kernodeck probe`: every step in one dynamically linked process
  Static,  // the static `kernodeck-probe` inside the judged image: loads nothing from it (loadsLibraries)
  Gate,    // `kernodeck gate`, in Kernodeck's own image: the attached-report step alone, always required
};

// Parses the flags, runs the probe, prints the report, writes the termination
// log on failure; returns the exit code (0, 1, 2 or 3 as every subcommand). `reportCheck` makes
// the check of --require-report; without one that flag is a usage error (exit 2), never a pass.
int probeCommand(const std::vector<std::string>& args, const std::string& prog,
                 const ReportCheckFactory& reportCheck = {}, Mode mode = Mode::Probe);

}  // namespace kernodeck::probe
