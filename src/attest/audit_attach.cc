// See audit_attach.h.
#include "kernodeck/attest/audit_attach.h"

namespace kernodeck::attest {

Result<Attached> attachAuditReport(const report::Report& audit, const registry::ClientOptions& opts, const Key* key,
                                   int failOn) {
  if (audit.failed()) return Error::Invalid("the audit did not complete; nothing attached");
  return attachReport(audit.toJson(failOn), opts, key, failOn);
}

}  // namespace kernodeck::attest
