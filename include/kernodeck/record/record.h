// The reproducibility record: a reference declared before any comparison
// (kernodeck.reference/v1), its verification, the sample-output check, the
// comparison of two records, and the dossier folder another run can replay.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
  std::string expected;         // folder of expected outputs
  std::string ids;              // file name of the ids inside the output folders
  std::string criterion, why;
};

// Parses "name=path[,provenance=...][,access=...]".
Result<NamedInput> parseNamedInput(const std::string& s);

// A file's sha256 and size, or for a directory a manifest of every file and the manifest's own hash.
Result<nlohmann::json> hashPath(const std::string& path);

// Builds kernodeck.reference/v1; findings (reference.mutable_name...) go to `r`.
Result<nlohmann::json> buildReference(const ReferenceOptions& o, report::Report& r);
// Re-hashes code, configs, data and weights; says which layer changed.
report::Report verifyReference(const nlohmann::json& ref);
// Reloads the outputs in `outDir` and checks them against the reference's expected outputs.
report::Report sampleCheck(const std::string& outDir, const nlohmann::json& ref);
// Compares two references, audit reports or inventories.
report::Report diffRecords(const nlohmann::json& a, const nlohmann::json& b);

struct DossierOptions {
  std::string dir, reference, outputs;  // outputs: the sample folder the procedure checks
  std::vector<std::string> reports;     // check reports to include (kernodeck.report/v1)
  std::string self;                     // path of the kernodeck binary, for the procedure
};
report::Report buildDossier(const DossierOptions& o);
report::Report verifyDossier(const std::string& dir);
report::Report replayDossier(const std::string& dir, const std::string& self);

}  // namespace kernodeck::record
