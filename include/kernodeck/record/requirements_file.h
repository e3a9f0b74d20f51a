// Requirements files as pip reads them, checked before a replay lets pip read them.
//
// A dossier's requirements are someone else's text, and pip follows more than package names:
// `-r`/`-c` includes (local or URLs, at any depth), index and find-links options (also under
// the abbreviations optparse accepts: `--find=URL`, `--ind`), `name @ URL`, bare URLs and
// paths, `-e`, `${VAR}` expansion. scanRequirements reads a file the way pip's req_file.py
// does (backslash continuations joined, `#` comments cut, options parsed, includes followed
// relative to the including file) and refuses, naming the file and line, anything that would
// make pip download, read outside the replay folder or build from source.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::record {

struct RequirementsScanOptions {
  // Reads an included file, given as a path relative to the replay folder (already checked to
  // stay beneath it). nullopt: not readable now (the plan, before the code is unpacked): the
  // include is taken on trust here and checked again when --run reads it. An error refuses.
  std::function<Result<std::optional<std::string>>(const std::string& rel)> read;
  bool allowSdist = false;  // --allow-sdist: `--no-binary` is accepted
};

// One requirement line that survived the scan, where it came from.
struct ScannedRequirement {
  std::string file;         // relative to the replay folder
  int line = 0;             // 1-based, the first physical line of a continued one
  std::string name;         // the distribution name as written
  std::string text;         // the logical line, comment removed
  std::string requirement;  // its requirement alone, options cut: what pip reads as PEP 508
};

// Scans `text`, the content of `file` (relative to the replay folder), and every file it
// includes. Unsafe "FILE line N: `TEXT`: WHY" for the first line that names an index, a link,
// a URL, a path or something pip would expand; Invalid for a line pip itself would reject.
Result<std::vector<ScannedRequirement>> scanRequirements(const std::string& file, const std::string& text,
                                                         const RequirementsScanOptions& o);

}  // namespace kernodeck::record
