#include <archive.h>
#include <openssl/opensslv.h>

#include <cstdio>

#include "commands.h"
#include "kernodeck/version.h"

#ifdef KERNODECK_WITH_TORCH
namespace kernodeck::probe {
const char* libtorchVersion();
}
#endif

namespace kernodeck::cli {

int runVersion(const std::vector<std::string>&) {
  std::printf("kernodeck %s (analysis %d)\n", kVersion, kAnalysisVersion);
  std::printf("libarchive %s\n", archive_version_details());
  std::printf("openssl %s\n", OPENSSL_VERSION_TEXT);
#ifdef KERNODECK_WITH_TORCH
  std::printf("libtorch %s\n", probe::libtorchVersion());
#else
  std::printf("libtorch not built in\n");
#endif
  return 0;
}

}  // namespace kernodeck::cli
