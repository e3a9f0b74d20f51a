// The --attach step of `kernodeck audit`: the report of a completed audit of a registry image,
// attached to the audited manifest (attachReport), signed when a key is given. An audit that did
// not complete is never attached: what it says is not a verdict.
#pragma once

#include "kernodeck/attest/attached_report.h"
#include "kernodeck/report/report.h"

namespace kernodeck::attest {

// Attaches `audit` (its JSON under `failOn`) to the manifest it names; an Invalid error "the audit
// did not complete; nothing attached" when it failed, else attachReport's result.
Result<Attached> attachAuditReport(const report::Report& audit, const registry::ClientOptions& opts, const Key* key,
                                   int failOn);

}  // namespace kernodeck::attest
