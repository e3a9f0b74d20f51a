// What a dossier carries besides its documents, copied in by `dossier build`: the code as a
// `git archive` of the recorded revision, the configs, the data and weights, the expected
// outputs, the wheels (--wheels, locked in pylock.toml) and the user's own files (--include).
// Every path the reference names must lie beneath the code root or an --input-root. Private to
// the record module.
#pragma once

#include "kernodeck/record/record.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/result.h"

namespace kernodeck::record {

// Copies what `o.reference` names into `o.dir`: a warning when the code cannot be archived,
// a dossier.input.changed error for an input whose hash is no longer the reference's, a
// dossier.wheel.changed error for a wheel the reference's lock names otherwise; an Unsafe error
// for a path outside the allowed roots, an Invalid one for a name that is no plain file name.
Status carry(const DossierOptions& o, report::Report& r);

}  // namespace kernodeck::record
