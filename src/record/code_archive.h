// The code a dossier carries: a `git archive` of the recorded revision, written at build and
// unpacked at replay. Private to the record module.
#pragma once

#include <string>

#include "kernodeck/util/result.h"

namespace kernodeck::record {

// Writes `git archive --format=tar REVISION` of `repo` to `outPath`. The revision must be a
// full commit id (isCommitId): a later commit in the repository does not change the archive.
Status archiveRevision(const std::string& repo, const std::string& revision, const std::string& outPath);

// Unpacks a tar (a dossier's code.tar, someone else's bytes) into `dest`, which is created.
// Only regular files, directories and symlinks whose target stays inside (relative, no "..")
// are written; an absolute or ".." member name, a hardlink, a device or a write through a
// symlink is an Unsafe error naming the member. Owners are not restored.
Status unpackCode(const std::string& tarPath, const std::string& dest);

}  // namespace kernodeck::record
