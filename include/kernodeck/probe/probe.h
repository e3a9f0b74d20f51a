// `kernodeck probe`: inside the container (or on any machine), can this
// environment compute what we expect, on the device we expect? Steps:
// versions, devices, compute, python (optional), reconcile. It never falls
// back to the CPU silently: with --expect cuda an unreachable GPU fails.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/probe/compute.h"
#include "kernodeck/report/report.h"

namespace kernodeck::host {
class HostFs;
}

namespace kernodeck::probe {

// `--require-report`: the image this probe runs from must carry an attached report that passes,
// signed by the key; the node then runs only audited images without scanning anything itself.
// The default of the gate's (and --require-report's) --timeout, in seconds.
inline constexpr int64_t kDefaultGateTimeoutS = 30;

struct ReportRequirement {
  std::string image;    // REGISTRY/REPO@sha256:... (--image, else $KERNODECK_IMAGE)
  std::string keyFile;  // PEM public key the report must be signed with
  std::string authfile, certDir;
  bool insecure = false;
  int retries = 2;
  long connectTimeoutS = 10;  // --connect-timeout
  // --timeout: the overall deadline of every registry exchange, from the start; past it the check
  // fails (exit 3). Well under a minute, so a pod never sits in Init behind a slow registry.
  int64_t timeoutS = kDefaultGateTimeoutS;
  std::vector<std::string> trustRepositories;  // --trust-repository GLOB: mirrors whose reports count
  int64_t maxAgeS = 0;                         // --max-age: reports signed longer ago do not count; 0: no limit
  int64_t maxClockSkewS = -1;                  // --max-clock-skew: signed times further ahead do not count; -1: default
};

// Checks the requirement into the probe report: findings (probe.report.*) when it is not met, an
// error when it could not be checked (registry unreachable), so the probe fails closed.
using ReportCheck = std::function<Status(report::Report&)>;
// Makes the check from the flags, or a usage error (a key that does not load, an image not named
// by digest). The full kernodeck binary provides one (registry client, attest); the probe-only
// kernodeck-probe has no registry client and none.
using ReportCheckFactory = std::function<Result<ReportCheck>(const ReportRequirement&)>;

struct ProbeOptions {
  std::string expect = "auto";  // cpu | cuda | rocm | auto (from the expectation, else cpu)
  Tolerance tolerance;
  std::string python;  // interpreter to run the built-in script with; empty: skip
  unsigned pythonTimeoutS = 60;
  std::string expectFrom;  // kernodeck.expect/v1 file; default /etc/kernodeck/expect.json
  std::string hostRecord = "/run/kernodeck/host.json";
  std::string hostRoot = "/";            // read host facts here when there is no host record
  const host::HostFs* hostFs = nullptr;  // when set, read them through it instead (tests: a fixture tree)
  std::string root = "/";                // the container's root, for the live Python inventory
  std::string devRoot = "/";             // where /dev is (tests point it at a fake tree)
  const host::HostFs* devFs = nullptr;   // when set, /dev is read and opened through it instead (tests)
  ReportCheck checkReport;               // step attached_report; skipped when empty
  // False in the statically linked kernodeck-probe, which runs inside the judged image: nothing is
  // loaded into the process from there (no LibTorch plugin, whatever $KERNODECK_TORCH_PLUGIN says,
  // no libcuda.so.1), so the image cannot change what the probe decides. The compute step is then
  // skipped and the python step computes in the image's own interpreter, a child process.
  bool loadsLibraries = true;
};

report::Report runProbe(const ProbeOptions& opts);

// One line (at most 4 KiB) saying why the probe failed, for /dev/termination-log.
std::string terminationMessage(const report::Report& r, int exitCode);

// Parses a `libcuda.so.<driver>` file name; empty when it is not one.
std::string driverFromLibcudaName(const std::string& fileName);

}  // namespace kernodeck::probe
