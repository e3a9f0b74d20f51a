// kernodeck version [--json]: the version of kernodeck and of the components it loads.
#include <openssl/opensslv.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "kernodeck/oci/archive_lib.h"
#include "kernodeck/os/rpm.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/version.h"

#include "kernodeck/probe/compute.h"

namespace kernodeck::cli {

namespace {

// One line per component for people, or (json) one object for scripts: kernodeck.version/v1,
// {"kernodeck", "analysis", "libarchive", "openssl", "librpm", "libtorch"}; a component that is
// not loaded is null with its reason under "missing".
int printVersion(bool json) {
  std::string rpm = os::librpmVersion();
  probe::LibtorchInfo t = probe::libtorchInfo();
  std::string torchBuild = t.cudaBuild ? "CUDA" : t.hipBuild ? "HIP" : "CPU";
  if (json) {
    nlohmann::json j = {{"schema", "kernodeck.version/v1"},
                        {"kernodeck", kVersion},
                        {"analysis", kAnalysisVersion},
                        {"libarchive", archive_version_details()},
                        {"openssl", OPENSSL_VERSION_TEXT},
                        {"librpm", nullptr},
                        {"libtorch", nullptr},
                        {"missing", nlohmann::json::object()}};
    if (!rpm.empty())
      j["librpm"] = rpm;
    else
      j["missing"]["librpm"] = os::rpmPluginError();
    if (t.available)
      j["libtorch"] = {{"version", t.version}, {"build", torchBuild}};
    else
      j["missing"]["libtorch"] = t.unavailable.empty() ? "not built in" : t.unavailable;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("kernodeck %s (analysis %d)\n", kVersion, kAnalysisVersion);
  std::printf("libarchive %s\n", archive_version_details());
  std::printf("openssl %s\n", OPENSSL_VERSION_TEXT);
  // librpm is in the rpm plugin, loaded here as it is for an image with an rpm database.
  if (!rpm.empty())
    std::printf("librpm %s (plugin)\n", rpm.c_str());
  else
    std::printf("librpm not loaded: %s\n", os::rpmPluginError().c_str());
  if (t.available)
    std::printf("libtorch %s (%s build)\n", t.version.c_str(), torchBuild.c_str());
  else
    std::printf("libtorch not loaded: %s\n", t.unavailable.empty() ? "not built in" : t.unavailable.c_str());
  return 0;
}

}  // namespace

int runVersion(const std::vector<std::string>& args) {
  bool json = false;
  for (const auto& a : args) {
    if (a == "-h" || a == "--help") {
      std::printf(
          "usage: kernodeck version [--json]\n\nprints the version of kernodeck and its components\n\n"
          "  -h, --help    show this help\n"
          "  --json        one JSON object (kernodeck.version/v1) for scripts\n\n%s",
          "exit codes: 0 ok; 2 usage error\n");
      return 0;
    }
    if (a == "--json") {
      json = true;
      continue;
    }
    std::fprintf(stderr, "kernodeck version: unexpected argument '%s' (try --help)\n", util::printable(a, 60).c_str());
    return report::kExitUsage;
  }
  return printVersion(json);
}

}  // namespace kernodeck::cli
