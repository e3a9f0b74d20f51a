// See pip_dry_run.h. `--report` with --dry-run is what lets Debian's pip (PEP 668: an
// externally managed interpreter) resolve without refusing; the report itself is not read.
#include "pip_dry_run.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <algorithm>

#include "kernodeck/util/process.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

std::string pipDryRun(const std::string& interpreter, const std::string& requirements,
                      const std::vector<std::string>& isolate, bool allowSdist) {
  char tmpl[] = "/tmp/kernodeck-dryrun-XXXXXX";
  if (!::mkdtemp(tmpl)) return "";  // no prediction rather than a wrong one
  std::string dir = tmpl;
  std::string problem;
  if (util::writeBeneath(dir, "requirements.txt", requirements).ok() && util::makeDirs(dir + "/home")) {
    util::ProcessSpec spec;
    spec.argv = isolate;
    for (const char* a : {"-m", "pip", "install", "--dry-run", "--report", "/dev/null", "--no-index", "--isolated",
                          "--disable-pip-version-check", "--no-input", "--quiet"})
      spec.argv.push_back(a);
    spec.argv.insert(spec.argv.begin() + static_cast<long>(isolate.size()), interpreter);
    if (!allowSdist) spec.argv.push_back("--only-binary=:all:");
    spec.argv.insert(spec.argv.end(), {"-r", dir + "/requirements.txt"});
    spec.cwd = dir;
    // The same sealing as the replay's commands: no variable of the caller's but PATH and locale.
    for (char** e = environ; e && *e; ++e) {
      std::string name(*e, std::strcspn(*e, "="));
      if (name != "PATH" && name != "LANG" && name != "LC_ALL") spec.unsetEnv.push_back(name);
    }
    spec.env = {{"HOME", dir + "/home"}, {"PIP_CONFIG_FILE", "/dev/null"}, {"PYTHONNOUSERSITE", "1"}};
    spec.timeoutMs = 120000;
    auto pr = util::runProcess(spec);
    if (pr.ok() && !pr->ok()) {
      // pip's line `No matching distribution found for X` (scanned: pip's output is the dossier's doing).
      std::string said = pr->err + pr->out;
      const std::string_view kMissing = "No matching distribution found for ";
      std::string found;
      for (size_t at = said.find(kMissing); at != std::string::npos && found.empty(); at = said.find(kMissing, at + 1)) {
        size_t end = said.find('\n', at + kMissing.size());
        if (end == std::string::npos) end = said.size();
        if (end > at + kMissing.size()) found = said.substr(at, std::min<size_t>(end - at, 400));
      }
      problem = !found.empty() ? found : "pip " + pr->describe() + ": " + pr->lastLine();
      problem = "pip's resolver (dry run) cannot meet the requirements from what the replay will have: " +
                util::printable(problem, 300);
    }
  }
  (void)util::removeTree(dir);
  return problem;
}

}  // namespace kernodeck::record
