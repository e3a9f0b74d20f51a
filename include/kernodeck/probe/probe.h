// `kernodeck probe`: inside the container (or on any machine), can this
// environment compute what we expect, on the device we expect? Steps:
// versions, devices, compute, python (optional), reconcile. It never falls
// back to the CPU silently: with --expect cuda an unreachable GPU fails.
#pragma once

#include <optional>
#include <string>

#include "kernodeck/probe/compute.h"
#include "kernodeck/report/report.h"

namespace kernodeck::probe {

struct ProbeOptions {
  std::string expect = "auto";            // cpu | cuda | rocm | auto (from the expectation, else cpu)
  Tolerance tolerance;
  std::string python;                     // interpreter to run the built-in script with; empty: skip
  unsigned pythonTimeoutS = 60;
  std::string expectFrom;                 // kernodeck.expect/v1 file; default /etc/kernodeck/expect.json
  std::string hostRecord = "/run/kernodeck/host.json";
  std::string hostRoot = "/";             // read host facts here when there is no host record
  std::string root = "/";                 // the container's root, for the live Python inventory
  std::string devRoot = "/";              // where /dev is (tests point it at a fake tree)
};

report::Report runProbe(const ProbeOptions& opts);

// One line (at most 4 KiB) saying why the probe failed, for /dev/termination-log.
std::string terminationMessage(const report::Report& r, int exitCode);

// Parses a `libcuda.so.<driver>` file name; empty when it is not one.
std::string driverFromLibcudaName(const std::string& fileName);

}  // namespace kernodeck::probe
