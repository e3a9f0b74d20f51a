// An exceptions file (kernodeck.exceptions/v1, report/exceptions.h) read from disk: YAML or JSON
// (JSON is YAML too; read with hook::parseYaml, so aliases, tags and the like are refused), at
// most 1 MiB, hashed (sha256 of the bytes read, recorded in the report and its signed predicate)
// and parsed by report::parseExceptions. `audit --exceptions` and `fleet run --exceptions`.
#pragma once

#include <string>
#include <string_view>

#include "kernodeck/report/exceptions.h"
#include "kernodeck/util/result.h"

namespace kernodeck::audit {

inline constexpr size_t kExceptionsMaxBytes = 1u << 20;

// The document `text` of the file `name`, checked against `today` (YYYY-MM-DD). Every error is
// Invalid and names the file (and the entry, where one is at fault).
Result<report::ExceptionsFile> parseExceptionsText(std::string_view text, const std::string& name,
                                                   std::string_view today);
// The file at `path`: NotFound / Io when it cannot be read, else as parseExceptionsText.
Result<report::ExceptionsFile> loadExceptionsFile(const std::string& path, std::string_view today);

}  // namespace kernodeck::audit
