// PEP 751 lock files (pylock.toml): read, written and turned into what Debian's pip 23 can
// install (a requirements file with --hash lines), since pip reads pylock.toml only from 25.1.
// The one reader of the format: the record (reference, dossier, replay) and the audit
// (`audit --lock`) both read locks through it. A library of its own in this folder
// (kdk_python_lock), so that toml++ stays out of the hook and the static probe, which link python.
//
// TOML 1.0 is read whole by toml++ (libtomlplusplus-dev), so every valid lock is read, whatever
// its [tool] tables hold (floats, multi-line strings, dates); what is not TOML (a key defined
// twice, an unclosed string) is an error naming the line, never a guess.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/python/pins.h"
#include "kernodeck/util/result.h"

namespace kernodeck::python {

// The document as JSON (tables as objects, arrays of tables as arrays, dates and times as their
// TOML text). Corrupt "line N: ..." when it is not TOML 1.0, or over 16 MiB.
Result<nlohmann::json> parseToml(std::string_view text);

// One distribution of a lock: a wheel, by file name and hash.
struct LockedWheel {
  std::string name;    // the wheel's file name (pkg-1.0-py3-none-any.whl); "" when the lock does not say
  std::string path;    // where the lock says it lies (relative to the lock), or "" for a URL
  std::string sha256;  // hex, lower case
  std::string url;     // where the lock says it was downloaded from, or ""
  std::map<std::string, std::string> hashes;  // every hash the lock gives, algorithm -> hex (sha256 included)
};
struct LockedPackage {
  std::string name, version;
  std::string marker;          // packages.marker (PEP 508, with `extras` and `dependency_groups`), "" for always
  std::string requiresPython;  // packages.requires-python, "" for any
  std::string index;           // packages.index: the index it came from, or ""
  std::vector<LockedWheel> wheels;
  bool sdistOnly = false;  // the package has an sdist and no wheel (refused unless --allow-sdist)
  // A requirements file's line, read as a lock: its hashes name no file (any of them is the
  // archive pip may install), and `wheels` holds one entry per hash with no name.
  bool anyOfHashes = false;
};
struct Lock {
  std::string lockVersion;  // lock-version: "1.0"; "" for a requirements file read as a lock
  std::string requiresPython;
  std::vector<std::string> environments;  // markers, one of which the target must satisfy; empty: any
  std::vector<std::string> extras, dependencyGroups, defaultGroups;  // names, PEP 503 normalised
  std::vector<LockedPackage> packages;
};

// pylock.toml → Lock: every package needs a name, a version and a sha256 for each wheel; each
// hash has its algorithm's length in lower-case hex (sha256 64, sha384 96, sha512 128, ...);
// markers and requires-python parse. Corrupt naming the field otherwise.
Result<Lock> parsePylock(std::string_view text);
// A requirements file with every line pinned with == (pip's hash-checking mode: --hash lines)
// as a lock: the versions, markers and archive hashes it states. Corrupt naming the first line
// that is not a pin, an include or an option that cannot be read.
Result<Lock> lockFromRequirements(const RequirementsFile& file);
// Lock → pylock.toml (lock-version 1.0, created-by kernodeck), each wheel with a relative path.
std::string writePylock(const Lock& lock);
// Lock → the requirements pip 23 installs with --require-hashes: `name==version --hash=sha256:H`.
std::string lockRequirements(const Lock& lock);

// A wheel's file name split per PEP 427 into distribution name and version; false when it is
// not a wheel's name. `tags`, when given, gets its compressed tag triple ("py3-none-any").
bool wheelNameVersion(const std::string& file, std::string& name, std::string& version, std::string* tags = nullptr);

}  // namespace kernodeck::python
