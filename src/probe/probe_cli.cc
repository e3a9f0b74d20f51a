#include "kernodeck/probe/probe_cli.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>

#include "kernodeck/probe/probe.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/util/time.h"
#include "kernodeck/version.h"

namespace kernodeck::probe {

namespace {

const char* kHelp =
    "usage: %s [options]\n\n"
    "options:\n"
    "  --expect cpu|cuda|rocm|auto  accelerator that must work (auto: the expectation's, else cpu)\n"
    "  --atol X, --rtol X           tolerances against the CPU result, declared before the run (default 1e-3 each)\n"
    "  --python PATH                also run this interpreter's torch with a built-in script\n"
    "  --python-timeout S           seconds allowed for --python (default 60)\n"
    "  --expect-from FILE           kernodeck.expect/v1 (default /etc/kernodeck/expect.json, else the live Python "
    "inventory)\n"
    "  --host-record FILE           kernodeck.host/v1 (default /run/kernodeck/host.json, else read the host)\n"
    "  --host-root DIR              host root to read without a host record (default /)\n"
    "  --dev-root DIR               look for /dev under DIR (default /)\n"
    "  --json                       print the kernodeck.report/v1 JSON report\n"
    "  -o, --output FILE            write the report to FILE\n"
    "  --fail-on LEVEL              exit 1 on findings at or above info, warning, error (default), none\n"
    "  --termination-log FILE       on failure, write a one-line verdict here (default /dev/termination-log if "
    "present)\n"
    "  --version                    print the version and exit (alone on the line)\n\n"
    "attached report (run only audited images; kernodeck probe, not the probe-only kernodeck-probe):\n"
    "  --require-report             the image must carry a report attached by `kernodeck audit --attach --sign-key`,\n"
    "                               signed by --key, about this image, whose verdict is pass (else exit 1, whatever\n"
    "                               --fail-on says; exit 3 when the registry cannot be asked)\n"
    "  --key FILE                   PEM public key the report must be signed with (required by --require-report)\n"
    "  --image REF@sha256:DIGEST    the image this probe runs from (default $KERNODECK_IMAGE), named by digest\n"
    "  --max-age DURATION           a report signed longer ago does not count (e.g. 30d, 12h, 1w2d; default: any age)\n"
    "  --max-clock-skew DURATION    a report signed for a time further ahead of this clock does not count (default "
    "5m)\n"
    "  --authfile FILE              registry credentials (auth.json or docker config.json format)\n"
    "  --cert-dir DIR               registry: extra CA certificates (*.crt)\n"
    "  --insecure                   registry: allow plain HTTP and unverified TLS (always allowed for loopback)\n"
    "  --trust-repository GLOB     also count reports signed for a repository matching GLOB (REGISTRY/REPO, '*'\n"
    "                               matches '/'; a mirror's source; repeatable; default: only the image's own)\n"
    "  --timeout DURATION           registry: the overall deadline of the check (default 30s; past it, exit 3)\n"
    "  --retries N                  registry: retries of a failed request (default 2)\n"
    "  --connect-timeout S          registry: connect timeout in seconds (default 10)\n\n"
    "exit codes: 0 ok, 1 findings at or above --fail-on, 2 usage, 3 a step failed\n";

const char* kGateHelp =
    "usage: %s --key FILE [--image REF@sha256:DIGEST] [options]\n\n"
    "The admission gate, run in Kernodeck's own image (never in the image it judges): exit 0 only when the\n"
    "image carries a report attached by `kernodeck audit --attach --sign-key`, signed by --key, about this\n"
    "image, whose verdict is pass. It loads no LibTorch and reads no device.\n\n"
    "options:\n"
    "  --key FILE                   PEM public key the report must be signed with (required)\n"
    "  --image REF@sha256:DIGEST    the image to judge (default $KERNODECK_IMAGE), named by digest (required)\n"
    "  --max-age DURATION           a report signed longer ago does not count (e.g. 30d, 12h, 1w2d; default: any age)\n"
    "  --max-clock-skew DURATION    a report signed for a time further ahead of this clock does not count (default "
    "5m)\n"
    "  --authfile FILE              registry credentials (auth.json or docker config.json format)\n"
    "  --cert-dir DIR               registry: extra CA certificates (*.crt)\n"
    "  --insecure                   registry: allow plain HTTP and unverified TLS (always allowed for loopback)\n"
    "  --trust-repository GLOB     also count reports signed for a repository matching GLOB (REGISTRY/REPO, '*'\n"
    "                               matches '/'; a mirror's source; repeatable; default: only the image's own)\n"
    "  --timeout DURATION           registry: the overall deadline of the check (default 30s; past it, exit 3)\n"
    "  --retries N                  registry: retries of a failed request (default 2)\n"
    "  --connect-timeout S          registry: connect timeout in seconds (default 10)\n"
    "  --json                       print the kernodeck.report/v1 JSON report\n"
    "  -o, --output FILE            write the report to FILE\n"
    "  --fail-on LEVEL              also exit 1 on other findings at or above LEVEL (default error)\n"
    "  --termination-log FILE       on failure, write a one-line verdict here (default /dev/termination-log if "
    "present)\n"
    "  --version                    print the version and exit (alone on the line)\n\n"
    "exit codes: 0 a passing report, 1 none (missing, unverified, failed), 2 usage (no key, no image, no digest),\n"
    "3 the registry could not be asked\n";

// The gate's report: the attached_report step alone (no device, no LibTorch, no Python).
report::Report runGate(const ReportCheck& check, const std::string& image) {
  report::Report r("gate");
  r.declareSteps({"attached_report"});
  r.subject()["reference"] = image;
  r.runStep("attached_report", [&] { return check(r); });
  return r;
}

std::optional<double> parseDouble(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v >= 0)) return std::nullopt;
  return v;
}

// The command line, parsed: the probe's options, the attached-report requirement and the output.
struct ProbeFlags {
  ProbeOptions o;
  ReportRequirement req;
  std::string output, failOn = "error", terminationLog;
  bool json = false, requireReport = false, reportFlag = false, help = false, version = false;
  std::string probeFlag;  // the first flag of the device and compute steps, which the gate refuses
};

// The last usage error's line, for the termination message (kubectl describe shows it).
std::string& lastUsage() {
  static std::string line;
  return line;
}

// Prints "PROG: MSG (try --help)"; returns the usage exit code.
int usageLine(const std::string& prog, const std::string& msg) {
  lastUsage() = prog + ": exit 2; usage: " + util::printable(msg);
  std::fprintf(stderr, "%s: %s (try --help)\n", prog.c_str(), util::printable(msg).c_str());
  return 2;
}

constexpr int kNotMine = -2;

// The attached report's registry flags that take a value (--retries, --connect-timeout,
// --timeout, --trust-repository) into `req`: kNotMine when `a` is none of them, -1 when read,
// else the usage exit code (after one line).
int registryValueFlag(const std::string& a, const std::function<std::optional<std::string>()>& next,
                      ReportRequirement& req, const std::function<int(const std::string&)>& usage) {
  if (a == "--retries" || a == "--connect-timeout") {
    auto v = next();
    auto d = v ? parseDouble(*v) : std::nullopt;
    if (!d || *d > 100 || (a == "--connect-timeout" && *d < 1))
      return usage("option " + a + " needs a number from " + (a == "--connect-timeout" ? "1" : "0") + " to 100");
    if (a == "--retries")
      req.retries = static_cast<int>(*d);
    else
      req.connectTimeoutS = static_cast<long>(*d);
    return -1;
  }
  if (a == "--timeout") {
    auto v = next();
    auto d = v ? util::parseDurationSeconds(*v) : std::nullopt;
    if (!d || *d > 3600)
      return usage("option --timeout needs a duration up to 1h such as 30s or 2m, not '" + v.value_or("") +
                   "' (the connect timeout in seconds is --connect-timeout)");
    req.timeoutS = *d;
    return -1;
  }
  if (a == "--trust-repository") {
    auto v = next();
    if (!v || v->empty()) return usage("option --trust-repository needs a glob such as registry.example/team/*");
    req.trustRepositories.push_back(*v);
    return -1;
  }
  return kNotMine;
}

// Reads ARGS into `f`; -1 to go on, else the exit code (after one usage line).
int parseFlags(const std::vector<std::string>& args, const std::string& prog, ProbeFlags& f) {
  ProbeOptions& o = f.o;
  ReportRequirement& req = f.req;
  std::string &output = f.output, &failOn = f.failOn, &terminationLog = f.terminationLog, &probeFlag = f.probeFlag;
  bool& reportFlag = f.reportFlag;
  auto usage = [&](const std::string& msg) { return usageLine(prog, msg); };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], value;
    bool hasValue = false;
    if (size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      hasValue = true;
    }
    auto next = [&]() -> std::optional<std::string> {
      if (hasValue) return value;
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    if (a == "-h" || a == "--help" || a == "--version") {
      // --version alone, as every tool answers it; with anything else it would hide what the line asks.
      if (a == "--version" && args.size() != 1) return usage("--version goes alone on the line");
      (a == "--version" ? f.version : f.help) = true;
      return -1;
    }
    if (a == "--json") {
      f.json = true;
      continue;
    }
    if (a == "--require-report") {
      f.requireReport = true;
      continue;
    }
    if (a == "--insecure") {
      req.insecure = reportFlag = true;
      continue;
    }
    std::string* target = a == "--expect"                ? &o.expect
                          : a == "--python"              ? &o.python
                          : a == "--expect-from"         ? &o.expectFrom
                          : a == "--host-record"         ? &o.hostRecord
                          : a == "--host-root"           ? &o.hostRoot
                          : a == "--dev-root"            ? &o.devRoot
                          : a == "--output" || a == "-o" ? &output
                          : a == "--fail-on"             ? &failOn
                          : a == "--termination-log"     ? &terminationLog
                                                         : nullptr;
    std::string* reportTarget = a == "--key"        ? &req.keyFile
                                : a == "--image"    ? &req.image
                                : a == "--authfile" ? &req.authfile
                                : a == "--cert-dir" ? &req.certDir
                                                    : nullptr;
    if (target || reportTarget) {
      auto v = next();
      if (!v) return usage("option " + a + " needs a value");
      *(target ? target : reportTarget) = *v;
      reportFlag = reportFlag || reportTarget;
      if (target && target != &output && target != &terminationLog && target != &failOn && probeFlag.empty())
        probeFlag = a;
      continue;
    }
    if (a == "--max-age" || a == "--max-clock-skew") {
      auto v = next();
      auto d = v ? util::parseDurationSeconds(*v) : std::nullopt;
      if (!d) return usage("option " + a + " needs a duration such as 30d, 12h or 5m, not '" + v.value_or("") + "'");
      (a == "--max-age" ? req.maxAgeS : req.maxClockSkewS) = *d;
      reportFlag = true;
      continue;
    }
    if (int rc = registryValueFlag(a, next, req, usage); rc != kNotMine) {
      if (rc >= 0) return rc;
      reportFlag = true;
      continue;
    }
    if (a == "--atol" || a == "--rtol" || a == "--python-timeout") {
      auto v = next();
      auto d = v ? parseDouble(*v) : std::nullopt;
      if (!d) return usage("option " + a + " needs a non-negative number");
      if (probeFlag.empty()) probeFlag = a;
      if (a == "--atol")
        o.tolerance.atol = *d;
      else if (a == "--rtol")
        o.tolerance.rtol = *d;
      else
        o.pythonTimeoutS = static_cast<unsigned>(*d);
      continue;
    }
    return usage("unrecognised option '" + a + "'");
  }
  return -1;
}

// Checks the flags together and, for --require-report, makes the check of the attached report;
// -1 to go on, else the exit code (after one line on stderr).
int checkFlags(const std::string& prog, const ReportCheckFactory& reportCheck, Mode mode, ProbeFlags& f) {
  ProbeOptions& o = f.o;
  ReportRequirement& req = f.req;
  auto usage = [&](const std::string& msg) { return usageLine(prog, msg); };
  if (mode == Mode::Gate && !f.probeFlag.empty())
    return usage(f.probeFlag + " belongs to the probe: the gate checks the attached report only");
  if (o.expect != "cpu" && o.expect != "cuda" && o.expect != "rocm" && o.expect != "auto")
    return usage("--expect takes cpu, cuda, rocm or auto, not '" + o.expect + "'");
  auto threshold = report::parseFailOn(f.failOn);
  if (!threshold.ok()) return usage(threshold.error().message);
  if (f.reportFlag && !f.requireReport)
    return usage("--key, --image, --max-age, --trust-repository and the registry options go with --require-report");
  if (f.requireReport) {
    // Never a silent pass: a build that cannot ask a registry says so and stops.
    if (!reportCheck) {
      std::fprintf(stderr,
                   "%s: --require-report: this build has no registry client and cannot check attached reports; "
                   "run `kernodeck gate` from Kernodeck's own image before this probe (docs/probe.md)\n",
                   prog.c_str());
      return 2;
    }
    const std::string who = mode == Mode::Gate ? "the gate" : "--require-report";
    if (req.keyFile.empty()) return usage(who + " needs --key, the public key the report must be signed with");
    if (req.image.empty())
      if (const char* env = std::getenv("KERNODECK_IMAGE")) req.image = env;
    if (req.image.empty())
      return usage(who + " needs the image it judges: --image REF@sha256:DIGEST or $KERNODECK_IMAGE");
    auto check = reportCheck(req);
    if (!check.ok()) return usage(who + ": " + check.error().message);
    o.checkReport = std::move(*check);
  }
  return -1;
}

// On a failure, the one-line verdict `message` in --termination-log (default /dev/termination-log
// when present), whatever the exit code: a usage error too, so that `kubectl describe` says why.
void writeTerminationLog(const std::string& prog, const std::string& terminationLog, const std::string& message) {
  struct stat st {};
  std::string path = !terminationLog.empty()                    ? terminationLog
                     : ::stat("/dev/termination-log", &st) == 0 ? "/dev/termination-log"
                                                                : "";
  if (path.empty()) return;
  // Written in place (kubelet bind-mounts the file), never through another user's link.
  if (auto w = util::writeOutputFile(path, message + "\n", util::OutputWrite::InPlace); !w.ok())
    std::fprintf(stderr, "%s: --termination-log: %s\n", prog.c_str(), w.error().message.c_str());
}

}  // namespace

int probeCommand(const std::vector<std::string>& args, const std::string& prog, const ReportCheckFactory& reportCheck,
                 Mode mode) {
  ProbeFlags f;
  f.o.loadsLibraries = mode != Mode::Static;
  f.requireReport = mode == Mode::Gate;
  if (int rc = parseFlags(args, prog, f); rc >= 0) {
    if (rc != 0) writeTerminationLog(prog, f.terminationLog, lastUsage());
    return rc;
  }
  if (f.help) {
    std::printf(mode == Mode::Gate ? kGateHelp : kHelp, prog.c_str());
    return 0;
  }
  if (f.version) {
    std::printf("%s %s\n", prog.c_str(), kVersion);
    return 0;
  }
  if (int rc = checkFlags(prog, reportCheck, mode, f); rc >= 0) {
    if (rc != 0) writeTerminationLog(prog, f.terminationLog, lastUsage().empty() ? prog + ": exit 2" : lastUsage());
    return rc;
  }
  auto threshold = report::parseFailOn(f.failOn);

  report::Report r = mode == Mode::Gate ? runGate(f.o.checkReport, f.req.image) : runProbe(f.o);
  int rc = r.exitCode(*threshold);
  // --require-report holds whatever --fail-on says: an image without a passing report fails.
  if (f.requireReport && rc == 0)
    for (const auto& x : r.findings())
      if (x.severity == report::Severity::Error && x.code.rfind("probe.report.", 0) == 0) rc = 1;
  std::string text = f.json ? r.toJson(*threshold).dump(2) + "\n" : r.toText(*threshold);
  if (f.output.empty() || f.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else if (auto st = util::writeOutputFile(f.output, text); !st.ok()) {
    std::fprintf(stderr, "%s: %s\n", prog.c_str(), st.error().message.c_str());
    writeTerminationLog(prog, f.terminationLog, prog + ": exit 3; " + st.error().message);
    return 3;
  }
  if (r.failed())
    std::fprintf(stderr, "%s: %s\n", prog.c_str(), r.firstError().c_str());
  else if (mode == Mode::Gate && rc != 0)  // the gate's refusal is one line, as its other failures
    std::fprintf(stderr, "%s\n", terminationMessage(r, rc).c_str());
  if (rc != 0) writeTerminationLog(prog, f.terminationLog, terminationMessage(r, rc));
  return rc;
}

}  // namespace kernodeck::probe
