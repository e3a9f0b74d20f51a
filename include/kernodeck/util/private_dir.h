// A directory only its owner can write: what Kernodeck reads back as trusted from its local
// cache (blobs, layer results, whole audit results) must come from a directory of the current
// user's that nobody else can write to, or another user could plant a result there.
#pragma once

#include <string>

#include "kernodeck/util/result.h"

namespace kernodeck::util {

// Checks that `path` is a directory (not a symbolic link) owned by the effective user with
// permission bits 0700, creating it with 0700 (and its missing parents) when absent. Unsafe, with
// one line naming the directory and what to do, when it is someone else's, has other bits or is
// not a directory; Io when it cannot be created or examined. `what` names it ("cache directory").
Status openPrivateDir(const std::string& path, const std::string& what);

}  // namespace kernodeck::util
