// The reproducibility record: a reference declared before any comparison
// (kernodeck.reference/v1), its verification, the sample-output check, the
// comparison of two records, and the dossier folder another run can replay.
#pragma once

#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernodeck/record/documents.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/result.h"

namespace kernodeck::record {

struct NamedInput {
  std::string name, path, provenance, access;
};

struct ReferenceOptions {
  std::string repo, entryPoint, preprocessing;
  std::vector<std::string> configs;
  std::map<std::string, std::string> params;
  std::vector<NamedInput> data, weights;
  std::string packagesReport;   // a kernodeck audit JSON report (image or dir:/)
  std::string requirements;     // or a requirements file
  std::string hostRecord;       // kernodeck.host/v1; else the host is read under hostRoot
  std::string hostRoot = "/";
  std::string accelerator;      // the accelerator the project expects: cuda, rocm, cpu
  std::map<std::string, std::string> seeds;        // --seed NAME=VALUE
  std::map<std::string, std::string> determinism;  // --determinism NAME=VALUE (torch flags as the project sets them)
  std::string expected;         // folder of expected outputs
  std::string ids;              // file name of the ids inside the output folders
  std::vector<std::string> criteria, whys;  // each criterion and why it was chosen, in pairs
  // The folder the reference is written to: relative paths are recorded relative to it, so
  // that the reference means the same files wherever it is read from.
  std::string referenceDir;
};

// Parses "name=path[,provenance=...][,access=...]".
Result<NamedInput> parseNamedInput(const std::string& s);

// A file's sha256 and size, or for a directory a manifest of every file and the manifest's own hash.
Result<HashedInput> hashPath(const std::string& path);

// Builds kernodeck.reference/v1; findings (reference.mutable_name...) go to `r`.
Result<nlohmann::json> buildReference(const ReferenceOptions& o, report::Report& r);
// A reference as a person reads it (`reference show`).
std::string referenceText(const Reference& ref);
// Re-hashes code, configs, data and weights; says which layer changed.
report::Report verifyReference(const Reference& ref);
// Reloads the outputs in `outDir` and checks them against the reference's expected outputs.
report::Report sampleCheck(const std::string& outDir, const Reference& ref);

// What `diff` compares: a reference, or a report / inventory.
struct DiffInput {
  std::optional<Reference> reference;
  std::optional<ReportDoc> report;
};
// Parses either kind; an error (exit 2) for any other document.
Result<DiffInput> parseDiffInput(const nlohmann::json& j);
report::Report diffRecords(const DiffInput& a, const DiffInput& b);

struct DossierOptions {
  std::string dir, outputs;             // outputs: the sample folder the procedure checks
  Reference reference;
  std::vector<ReportDoc> reports;       // check reports to include (kernodeck.report/v1)
};
report::Report buildDossier(const DossierOptions& o);
// Checks every file of the dossier against its MANIFEST.sha256 (parsed by the caller).
report::Report verifyDossier(const std::string& dir, const std::vector<ManifestEntry>& manifest);

struct ReplayOptions {
  std::string dir;         // the dossier
  std::string self;        // this binary, for Kernodeck's own steps
  Procedure procedure;     // the dossier's procedure.json, parsed
  std::vector<ManifestEntry> manifest;  // its MANIFEST.sha256, parsed
  bool runProject = false; // run the project's own steps too (otherwise they are printed only)
};
report::Report replayDossier(const ReplayOptions& o);

}  // namespace kernodeck::record
