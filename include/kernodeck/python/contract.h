// The dependency contract `pip check` enforces, computed from metadata alone,
// and wheel tag compatibility with the image's Python and architecture.
#pragma once

#include <string>
#include <vector>

#include "kernodeck/python/environment.h"
#include "kernodeck/python/marker.h"
#include "kernodeck/python/requirement.h"

namespace kernodeck::python {

struct ContractIssue {
  enum Kind { Missing, Conflict, Undecidable, Invalid } kind;
  std::string package, version;  // the distribution that requires
  std::string requirement;       // as written
  std::string dependency;        // the required name, normalised
  std::string installed;         // installed version, for conflicts
};

// Does the installed distribution's version meet the requirement's specifier, as pip check
// decides it (pre-releases allowed; a legacy, non-PEP 440 version is matched by === only)?
bool satisfies(const Distribution& installed, const Requirement& req);

// As pip check: for each distribution, each Requires-Dist whose marker holds with
// extra "" (or has none); missing when no distribution of that name is installed,
// a conflict when the installed version is outside the specifier (pre-releases allowed).
// A marker the image cannot decide gives Undecidable instead of a verdict.
std::vector<ContractIssue> checkContract(const PythonEnv& env, const MarkerEnv& markers);

// Does any of the WHEEL tags fit CPython `pythonVersion` ("3.11[.x]") on OCI architecture `arch`?
bool wheelTagsSupported(const std::vector<std::string>& tags, const std::string& pythonVersion, const std::string& arch,
                        std::string* why = nullptr);

}  // namespace kernodeck::python
