#include <archive.h>
#include <openssl/opensslv.h>

#include <cstdio>

#include "commands.h"
#include "kernodeck/version.h"

#include "kernodeck/probe/compute.h"

namespace kernodeck::cli {

int runVersion(const std::vector<std::string>&) {
  std::printf("kernodeck %s (analysis %d)\n", kVersion, kAnalysisVersion);
  std::printf("libarchive %s\n", archive_version_details());
  std::printf("openssl %s\n", OPENSSL_VERSION_TEXT);
  probe::LibtorchInfo t = probe::libtorchInfo();
  if (t.available)
    std::printf("libtorch %s (%s build)\n", t.version.c_str(), t.cudaBuild ? "CUDA" : t.hipBuild ? "HIP" : "CPU");
  else
    std::printf("libtorch not built in\n");
  return 0;
}

}  // namespace kernodeck::cli
