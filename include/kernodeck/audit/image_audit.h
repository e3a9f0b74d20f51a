// `kernodeck audit`: reads an image (or an unpacked root filesystem) without
// running it, verifies every digest, walks the layers into a filesystem view,
// and collects findings into a kernodeck.report/v1 report.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/oci/manifest.h"
#include "kernodeck/report/report.h"

namespace kernodeck::audit {

struct AuditOptions {
  std::optional<oci::Platform> platform;  // default: the host's
  // Extra paths whose content the layer walk should keep (analysers add theirs).
  std::function<bool(const std::string&)> capture;
};

struct AuditResult {
  report::Report report{"audit"};
  // The final filesystem, when the walk got that far; for analysers that follow.
  std::unique_ptr<oci::FsView> view;
};

AuditResult auditImage(const std::string& reference, const AuditOptions& opts);

}  // namespace kernodeck::audit
