// git, run for the record through util::runProcess.
#include "git.h"

#include "kernodeck/util/process.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

Result<std::string> git(const std::string& repo, std::vector<std::string> args) {
  util::ProcessSpec spec;
  spec.argv = {"git", "-c", "core.fsmonitor=false", "-C", repo};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {{"GIT_TERMINAL_PROMPT", "0"}, {"GIT_OPTIONAL_LOCKS", "0"}};
  spec.timeoutMs = 60000;
  KDK_TRY_ASSIGN(util::ProcessResult r, util::runProcess(spec));
  if (!r.ok()) {
    std::string why = r.lastLine();
    return Error::Invalid("git -C " + util::printable(repo, 200) + " " + args[0] + " " + r.describe() +
                          (why.empty() ? "" : ": " + why));
  }
  return std::string(util::trim(r.out));
}

bool isCommitId(const std::string& revision) {
  if (revision.size() != 40 && revision.size() != 64) return false;
  for (char c : revision)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace kernodeck::record
