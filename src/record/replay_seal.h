// The sealing of a replay's commands (docs/record.md, "The trust model of a replay"), and
// what the replay checks of the environment it built. Private to the record module.
#pragma once

#include <optional>
#include <string>

#include "kernodeck/record/pylock.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/result.h"

namespace kernodeck::record {

// A command's environment: only the allowlisted variables of the caller's (PATH, locale,
// library path, NVIDIA's), HOME and temporary files in the replay folder WORK, pip told to
// read no configuration and no index, then spec.env (the action's own) on top.
void sealEnvironment(util::ProcessSpec& spec, const std::string& work);

// Reads WORK/REL for the requirements scan: no component may be a link (a code.tar could
// plant one), the file must be a regular one of at most 1 MiB.
Result<std::optional<std::string>> readBeneath(const std::string& work, const std::string& rel);

// After the environment step: `python -m pip list` of the new environment (started under
// `isolate`, sealed) against the lock. A `replay.inventory.differs` error naming each locked
// package that is missing or at another version, `replay.inventory.matches` otherwise.
// An error when pip list itself cannot be run or read.
Status compareInventory(const std::string& python, const std::vector<std::string>& isolate, const std::string& work,
                        const Lock& lock, report::Report& r);

}  // namespace kernodeck::record
