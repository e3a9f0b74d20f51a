// git, run for the record (the revision of the code, its archive, a clone at a revision).
// Private to the record module.
#pragma once

#include <string>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::record {

// Runs `git -C repo ARGS` with an argv (no shell): the path and everything else are
// arguments, never syntax. core.fsmonitor is switched off so that a repository's own
// configuration cannot make `git status` start a program. Returns stdout, trimmed; an
// Invalid error naming the repository and git's last line when git fails.
Result<std::string> git(const std::string& repo, std::vector<std::string> args);

// A full commit id (40 hex digits, or 64 for a SHA-256 repository): the only revision form
// the record passes to git, so that a hostile one can never be read as an option.
bool isCommitId(const std::string& revision);

}  // namespace kernodeck::record
