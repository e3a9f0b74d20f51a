// The sealing of a replay's commands (docs/record.md, "The trust model of a replay").
// Private to the record module.
#pragma once

#include <optional>
#include <string>

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

}  // namespace kernodeck::record
