// `audit --lock`: the image's Python environments against the locks they were installed from
// (PEP 751 pylock.toml, or a requirements file pinned with ==, --hash lines read as wheel
// hashes), and with `--wheels DIR` against the locked wheels' own files. The lock and the wheels
// are evidence from outside the image: whoever changes a file in the image can change its RECORD
// line too, not the lock's hash of the wheel.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/python/environment.h"
#include "kernodeck/python/pylock.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/result.h"

namespace kernodeck::audit {

struct LockInput {
  std::string environment;  // ENV of --lock ENV=FILE (a prefix or interpreter in the image), or ""
  std::string file;         // as given
  std::string format;       // "pylock" or "requirements"
  std::string sha256;       // of the file's bytes
  python::Lock lock;
};

struct LockOptions {
  std::vector<LockInput> locks;     // --lock, in order
  std::vector<std::string> groups;  // --lock-group: extras or dependency groups; empty: default-groups
  std::string wheelsDir;            // --wheels: the locked wheel files, by their names
  // python.lock.extra only for the distributions installed under the environment's own prefix:
  // a replay's venv (made with --system-site-packages) over a base interpreter that no lock
  // covers, whose packages the venv sees but that were not installed into it.
  bool extraOwnOnly = false;
};

// Reads --lock's value (FILE, or ENV=FILE when the part before '=' is an absolute path): a
// *.toml file as pylock.toml, anything else as a requirements file. Corrupt naming the file for
// a lock that cannot be read as one (exit 2), NotFound or Io when it cannot be read at all.
Result<LockInput> readLockFile(const std::string& spec);
// Invalid naming a --lock-group that no pylock.toml among `o.locks` lists (nothing to select).
Status checkLockGroups(const LockOptions& o);

// In the python step: each lock against its environment (envsJson[i] is envs[i]'s section:
// it gets "lock", and each package its lock source and evidence); findings python.lock.*.
// A replay's environment check (record/replay_inventory.cc) calls it too, on the rebuilt venv.
void auditLocks(const oci::FsView& view, const std::vector<python::PythonEnv>& envs, const std::string& architecture,
                const LockOptions& o, report::Report& r, nlohmann::json& envsJson);

}  // namespace kernodeck::audit
