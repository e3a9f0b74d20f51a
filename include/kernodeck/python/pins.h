// pip requirement files: requirement lines, -r/-c includes, --hash,
// --index-url/--extra-index-url, line continuations, comments and ${VAR}
// expansion, as pip reads them.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/python/requirement.h"

namespace kernodeck::python {

struct PinLine {
  std::string file;
  int line = 0;
  std::string text;                 // the requirement part, expanded
  std::optional<Requirement> req;   // empty when the line is not a requirement we can parse
  std::vector<std::string> hashes;  // "sha256:<hex>"
  bool constraint = false;          // from a -c file
  std::string error;
};

struct RequirementsFile {
  std::vector<PinLine> lines;
  std::vector<std::string> indexUrls;  // --index-url and --extra-index-url values, expanded
  std::vector<std::string> errors;     // unreadable includes, bad lines
  bool usesHashes = false;             // any --hash: pip then requires every line pinned with ==
};

// Reads `path` and its includes through `read` (nullopt: unreadable). Includes are
// resolved relative to the including file; a cycle or depth > 16 stops.
RequirementsFile loadRequirements(const std::string& path,
                                  const std::function<std::optional<std::string>(const std::string&)>& read,
                                  const std::map<std::string, std::string>& env = {});

// True when the specifier pins exactly one version (== without wildcard, or ===).
bool isPinned(const Requirement& r);

}  // namespace kernodeck::python
