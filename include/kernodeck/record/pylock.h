// PEP 751 lock files (pylock.toml): read, written and turned into what Debian's pip 23 can
// install (a requirements file with --hash lines), since pip reads pylock.toml only from 25.1.
//
// TOML 1.0 is read whole by toml++ (libtomlplusplus-dev), so every valid lock is read, whatever
// its [tool] tables hold (floats, multi-line strings, dates); what is not TOML (a key defined
// twice, an unclosed string) is an error naming the line, never a guess.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::record {

// The document as JSON (tables as objects, arrays of tables as arrays, dates and times as their
// TOML text). Corrupt "line N: ..." when it is not TOML 1.0, or over 16 MiB.
Result<nlohmann::json> parseToml(std::string_view text);

// One distribution of a lock: a wheel, by file name and hash.
struct LockedWheel {
  std::string name;    // the wheel's file name (pkg-1.0-py3-none-any.whl)
  std::string path;    // where the lock says it lies (relative to the lock), or "" for a URL
  std::string sha256;  // hex, lower case
};
struct LockedPackage {
  std::string name, version;
  std::vector<LockedWheel> wheels;
  bool sdistOnly = false;  // the package has an sdist and no wheel (refused unless --allow-sdist)
};
struct Lock {
  std::string lockVersion;  // lock-version: "1.0"
  std::vector<LockedPackage> packages;
};

// pylock.toml → Lock: every package needs a name, a version and a sha256 for each wheel;
// Corrupt naming the package otherwise.
Result<Lock> parsePylock(std::string_view text);
// Lock → pylock.toml (lock-version 1.0, created-by kernodeck), each wheel with a relative path.
std::string writePylock(const Lock& lock);
// Lock → the requirements pip 23 installs with --require-hashes: `name==version --hash=sha256:H`.
std::string lockRequirements(const Lock& lock);

// A wheel's file name split per PEP 427 into distribution name and version; false when it is
// not a wheel's name.
bool wheelNameVersion(const std::string& file, std::string& name, std::string& version);

}  // namespace kernodeck::record
