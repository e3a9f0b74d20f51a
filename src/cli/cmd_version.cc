#include <openssl/opensslv.h>

#include <cstdio>

#include "commands.h"
#include "kernodeck/oci/archive_lib.h"
#include "kernodeck/os/rpm.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/version.h"

#include "kernodeck/probe/compute.h"

namespace kernodeck::cli {

int runVersion(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "-h" || a == "--help") {
      std::printf("usage: kernodeck version\n\nprints the version of kernodeck and its components\n\n%s",
                  kExitCodesHelp);
      return 0;
    }
    std::fprintf(stderr, "kernodeck version: unexpected argument '%s' (try --help)\n", util::printable(a, 60).c_str());
    return report::kExitUsage;
  }
  std::printf("kernodeck %s (analysis %d)\n", kVersion, kAnalysisVersion);
  std::printf("libarchive %s\n", archive_version_details());
  std::printf("openssl %s\n", OPENSSL_VERSION_TEXT);
  // librpm is in the rpm plugin, loaded here as it is for an image with an rpm database.
  std::string rpm = os::librpmVersion();
  if (!rpm.empty())
    std::printf("librpm %s (plugin)\n", rpm.c_str());
  else
    std::printf("librpm not loaded: %s\n", os::rpmPluginError().c_str());
  probe::LibtorchInfo t = probe::libtorchInfo();
  if (t.available)
    std::printf("libtorch %s (%s build)\n", t.version.c_str(), t.cudaBuild ? "CUDA" : t.hipBuild ? "HIP" : "CPU");
  else
    std::printf("libtorch not built in\n");
  return 0;
}

}  // namespace kernodeck::cli
