// What a replay checks of the environment it rebuilt, before the entry point runs: the new
// venv read statically (Kernodeck's own reading of dist-info, the code `audit` uses), its
// inventory against the packages the reference declares, its pip-check contract, and the
// reference's lock (the audit's own lock check, audit/lock_audit.h). Private to the record module.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernodeck/record/documents.h"
#include "kernodeck/python/pylock.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/result.h"

namespace kernodeck::record {

// The packages a reference declares, each with the versions it allows: its requirements
// lines (PEP 508, markers evaluated for `pythonVersion`), its recorded environments' freeze
// lines and its lock (packages.lock), as `name==version`. `carried` (the dossier's own
// pylock.toml) adds the wheels the dossier carries.
struct DeclaredPackage {
  std::string name, key;                // as written, and PEP 503 normalised
  std::vector<std::string> specifiers;  // each source's requirement ("torch>=1.12", "numpy==1.24.2")
  std::vector<std::string> sources;     // where each came from: requirements, environment PREFIX, lock
};
std::vector<DeclaredPackage> declaredPackages(const Reference& ref, const std::optional<python::Lock>& carried,
                                              const std::string& pythonVersion);

// Reads the venv at `venv` (absolute; its own site packages from this host's filesystem, where
// the replay folder lies) with the system site packages of its base interpreter: this host's,
// or, when `imageRoot` is given (the image's root filesystem, mounted), the image's recorded
// interpreter's. Compares it with the declared packages: a `replay.inventory.differs` error for
// each declared package that is missing or at a version its declaration does not allow, and
// for each distribution installed into the venv itself that nothing declared requires; a
// `replay.contract.broken` error for each Requires-Dist of a declared package (or of what they
// require, or of the venv's own) that no installed distribution meets, as `pip check` says.
// When the reference records a lock (reference init --lock), the venv is checked against it as
// `audit --lock --wheels` checks an image's environment (audit::auditLocks, the same findings
// python.lock.* and evidence): each locked package installed at its version, nothing else
// installed into the venv, and each of its files the file of its locked wheel, among those
// under `wheels` (where the replay placed the dossier's wheels, each by its hash).
// The inventory, contract and lock go into the report's `environment` section. An error when the
// venv cannot be read; an Invalid error naming the packages when anything differs, so the
// entry point does not run.
Status checkRebuiltEnvironment(const std::string& venv, const std::string& imageRoot, const Reference& ref,
                               const std::optional<python::Lock>& carried, const std::string& wheels,
                               report::Report& r);

}  // namespace kernodeck::record
