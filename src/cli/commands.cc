#include "commands.h"

#include <malloc.h>

#include <cstdio>

#include "kernodeck/report/report.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/version.h"

namespace kernodeck::cli {

void returnLargeFreesToTheKernel() {
  // Setting the threshold also turns off glibc's moving of it (mallopt(3), M_MMAP_THRESHOLD).
  ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"audit", "audit an image or root filesystem without running it", runAudit},
      {"probe", "inside the container: see the devices, compute with LibTorch, reconcile image, host and live view",
       runProbe},
      {"gate", "in Kernodeck's image, before a pod starts: exit 0 only if the image carries a passing signed report",
       runGate},
      {"reference", "declare the reference (code, data, weights, packages, system, criterion) and verify it",
       runReference},
      {"sample", "check sample outputs against the reference under its declared criterion", runSample},
      {"resume", "check that training resumes from a checkpoint on the same trajectory; inspect checkpoints",
       runResume},
      {"dossier", "build, verify and replay the final folder of a reproduction", runDossier},
      {"diff", "compare two audit reports (packages and findings), references or inventories", runDiffReports},
      {"fleet", "audit every image of a registry in shards (plan, run, summary), sharing layer results", runFleet},
      {"reports", "list, fetch and verify the audit reports attached to a registry image", runReports},
      {"host", "print this node's GPU facts (driver, GPUs, device nodes, MIG, ROCm)", runHost},
      {"version", "print the version of kernodeck and its components (--json for scripts)", runVersion},
      {"completion", "print a bash or zsh completion script", runCompletion},
  };
  return table;
}

const char* const kExitCodesWithoutFailOn =
    "exit codes: 0 ok; 1 an error finding; 2 usage error, or a document that is not what\n"
    "the command takes; 3 could not complete (a step failed: the report still says what\n"
    "was done and the first error)\n";

const char* const kExitCodesHelp =
    "exit codes: 0 ok; 1 findings at or above --fail-on; 2 usage error, or a document\n"
    "that is not what the command takes; 3 could not complete (a step failed: the\n"
    "report still says what was done and the first error)\n";

int emit(const std::string& text, const std::string& outFile) {
  if (outFile.empty() || outFile == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return 0;
  }
  auto st = util::writeOutputFile(outFile, text);
  if (!st.ok()) {
    std::fprintf(stderr, "kernodeck: %s\n", st.error().message.c_str());
    return report::kExitIncomplete;
  }
  return 0;
}

}  // namespace kernodeck::cli
