// The dossier's index.html: the verdict it opens with, the reference (what was run, on what,
// what it should give and how that is judged), the included reports labelled apart, their steps,
// their findings grouped, the inventory and its diff against the reference. Every field is
// someone else's text: redacted, then escaped. Private to the record module.
#pragma once

#include <string>
#include <vector>

#include "kernodeck/record/documents.h"

namespace kernodeck::record {

// How an included report is named on the page: its number and command line.
std::string reportLabel(const ReportDoc& rep, size_t i);

// What the page is made from. `files` and `fileHashes`: each report's file in the dossier and
// its sha256, in the order of `reports`; `verdict` passed, failed or incomplete, and why;
// `criteria` the declared criteria as one line ("none" when there is none).
struct DossierPage {
  const Reference& ref;
  const std::vector<ReportDoc>& reports;
  std::vector<std::string> files, fileHashes;
  std::string verdict, why, criteria;
};

// The whole index.html.
std::string dossierPage(const DossierPage& p);

}  // namespace kernodeck::record
