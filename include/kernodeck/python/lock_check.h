// An environment checked against a lock (`audit --lock`): which of the lock's packages an
// installer would install into it (PEP 751: requires-python, environments, each package's
// marker with the chosen extras and dependency groups), and, given a wheel the lock names,
// whether every file the environment holds for that package is the wheel's.
#pragma once

#include <string>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/python/environment.h"
#include "kernodeck/python/marker.h"
#include "kernodeck/python/pylock.h"
#include "kernodeck/python/wheel_file.h"

namespace kernodeck::python {

// What the lock is evaluated against: the environment's markers (imageMarkerEnv) and the names
// chosen with --lock-group (extras or dependency groups the lock lists; empty: default-groups).
struct LockTarget {
  MarkerEnv markers;
  std::vector<std::string> groups;
};

struct LockSelection {
  // False when the lock's requires-python or environments exclude the target (`why` says which);
  // nothing is then selected.
  bool applies = true;
  std::string why;
  std::vector<const LockedPackage*> packages;  // what an installer would install, lock order
  // Packages taken although their marker (or requires-python) cannot be decided from the image.
  std::vector<const LockedPackage*> undecided;
};

// Names of `groups` that `lock` lists neither as an extra nor as a dependency group.
std::vector<std::string> unknownLockGroups(const Lock& lock, const std::vector<std::string>& groups);

LockSelection selectLocked(const Lock& lock, const LockTarget& target);

struct WheelFileIssue {
  enum Kind { Changed, Missing, Added } kind;
  std::string path;  // in the image, no leading '/'
  std::string expected, actual;  // sha256 hex (Changed)
  int layer = -1;                // the layer that last wrote it (Changed, Added)
};
struct WheelComparison {
  size_t checked = 0;                  // files compared with the wheel's RECORD hashes
  std::vector<WheelFileIssue> issues;  // in the wheel's member order, then the added files
  // Members not compared, with why (a script whose "#!python" line pip rewrites, headers).
  std::vector<std::string> notChecked;
};

// Every member of `wheel` where pip puts it for `dist` in `env` (the package directory; a
// .data/ member under the environment's prefix), re-hashed in `view` against the hash the
// wheel's own RECORD gives it (the hashes the layer walk
// took, prepared in one more read of a layer when it took none); then the package's own
// directories (the top-level folders of the wheel, its .dist-info) searched for files the
// wheel does not hold. Files pip itself writes are not issues: the .dist-info's RECORD,
// INSTALLER, REQUESTED and direct_url.json, and bytecode under __pycache__ (judged by the
// image's RECORD, as before).
WheelComparison compareWithWheel(const oci::FsView& view, const PythonEnv& env, const Distribution& dist,
                                 const WheelFile& wheel);

}  // namespace kernodeck::python
