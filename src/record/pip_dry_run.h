// The plan's prediction of the environment step: pip's own resolver, in dry-run mode, asked
// whether the recorded requirements can be met offline from what the replay will have (the
// recorded interpreter's site packages, which a venv made with --system-site-packages sees).
// Private to the record module.
#pragma once

#include <string>
#include <vector>

namespace kernodeck::record {

// Runs `interpreter -m pip install --dry-run --no-index --only-binary=:all:` (unless
// allowSdist) on `requirements` (the recorded lines, written to a temporary file) under the
// argv prefix `isolate`, with a sealed environment; nothing is installed and no package is
// built. Returns "" when pip can resolve them, else why not, naming the package pip names.
std::string pipDryRun(const std::string& interpreter, const std::string& requirements,
                      const std::vector<std::string>& isolate, bool allowSdist);

}  // namespace kernodeck::record
