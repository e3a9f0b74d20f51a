// The documents Kernodeck reads back: a reference (kernodeck.reference/v1), a dossier's
// procedure (kernodeck.procedure/v1) and MANIFEST.sha256; a report (kernodeck.report/v1) and a
// dossier's inventory are read by report/report_doc.h, named here for the record code.
//
// Every one of them may come from someone else (a dossier is handed around), so each is
// parsed once, here, into a typed struct; a value of the wrong type, a missing field or a
// truncated file is an Error naming the field ("data[0].sha256 is null, expected a
// string"), and the rest of the record code works on the structs only. Parsers are pure.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/python/pylock.h"
#include "kernodeck/report/report_doc.h"
#include "kernodeck/util/result.h"

namespace kernodeck::record {

struct HashedFile {
  std::string path, sha256;
  int64_t size = 0;
};

// One hashed input (config, data, weights): a file, or a directory with its file manifest.
struct HashedInput {
  std::string kind;    // file | directory
  std::string sha256;  // the file's, or the directory manifest's
  int64_t size = 0;
  std::vector<HashedFile> files;  // directory only
  std::string name, path, provenance, access;
};

// One Python environment's `pip freeze`-style lines (report_doc.h: a report records the same).
using Environment = report::PythonEnvironment;

struct Reference {
  // When these criteria were declared (created), and when a `sample check` first compared
  // outputs against them (first_checked, "" until then).
  std::string created, firstChecked;
  // True when no comparison had used any earlier version of the reference before the current
  // criteria were declared: false once criteria were revised after a check.
  bool declaredBeforeComparison = true;
  // An earlier version replaced by `reference init --revise WHY`: its criteria, when it was
  // declared and first checked, when it was revised and why.
  struct Revision {
    std::string created, firstChecked, revised, why;
    std::vector<std::pair<std::string, std::string>> criteria;  // text, why
  };
  std::vector<Revision> revisions;  // oldest first
  struct Code {
    std::string repo, revision;  // empty when no repository was recorded
    // code.root: the code's folder relative to the reference's (reference init --repo writes
    // it); every other recorded path is relative to it, and a replay unpacks the code there.
    // Empty in older references, whose paths are relative to the reference's folder.
    std::string root;
    bool dirty = false;
    std::string entryPoint, preprocessing;
    std::string outputs;  // where the entry point writes its outputs, relative to the reference
    std::map<std::string, std::string> parameters;
    std::vector<HashedInput> configs;
  } code;
  std::vector<HashedInput> data, weights;
  struct Packages {
    std::string source, manifestDigest;
    std::vector<Environment> environments;
    std::string requirementsSha256;
    std::vector<std::string> requirementsLines;
    // The base interpreter the project's venv is made from (packages.python), and its version.
    std::string interpreter, interpreterVersion;
    // packages.lock (reference init --lock pylock.toml): the lock's path as given, its sha256,
    // and the packages and wheels it locks; `dossier build` checks the wheels it carries
    // against it and a replay's rebuilt inventory is compared with it.
    std::string lockPath, lockSha256;
    std::optional<python::Lock> lock;
  } packages;
  struct System {
    bool recorded = false;  // system.host present
    bool nvidia = false;    // an NVIDIA driver was loaded
    std::string driverVersion;
    int64_t gpus = 0;
    std::string os, architecture, cpuModel, accelerator;  // empty: not recorded
    int64_t cores = 0, threads = 0;
  } system;
  // Seeds and determinism settings as the project declares them, and the environment
  // variables that change results (CUBLAS_WORKSPACE_CONFIG, PYTHONHASHSEED, OMP_NUM_THREADS...)
  // as they were set when the reference was made (an unset variable is absent).
  std::map<std::string, std::string> seeds, determinism, environment;
  // The expected outputs as recorded: one entry per tensor.
  struct Output {
    std::string name, dtype, sha256;
    std::vector<int64_t> shape;
  };
  std::vector<Output> outputs;
  struct Expected {
    bool declared = false;  // result.expected present
    std::string expected, expectedSha256, ids;
    // Each criterion as written and why it was chosen (result.criteria, or the older single
    // result.criterion).
    std::vector<std::pair<std::string, std::string>> criteria;
    std::vector<std::string> files;  // result.format.files
  } result;
  nlohmann::json json;  // the document as read
  // The folder of the reference file: relative paths in it are relative to that folder.
  std::string baseDir;
  // A path relative to the reference's folder (code.repo, code.root), as the reader can open it.
  std::string fromReference(const std::string& path) const {
    return path.empty() || path[0] == '/' || baseDir.empty() ? path : baseDir + "/" + path;
  }
  // A recorded path (data, weights, configs, outputs, expected), relative to the code's folder.
  std::string resolve(const std::string& path) const {
    if (path.empty() || path[0] == '/') return path;
    std::string root = code.root.empty() ? baseDir : fromReference(code.root);
    return root.empty() ? path : root + "/" + path;
  }
};

// kernodeck.reference/v1.
Result<Reference> parseReference(const nlohmann::json& j);
// A hashed input as the reference writes it (`named`: with name, provenance and access).
nlohmann::json toJson(const HashedInput& in, bool named);

// kernodeck.report/v1 (and a dossier's inventory.json): read by the report module's one reader.
using report::parseReportDoc;
using report::ReportDoc;

// procedure.json (kernodeck.procedure/v1): the steps `dossier replay` runs, in order. A
// "kernodeck" step runs this binary with argv (a subcommand from a fixed list); a "project"
// step runs the project's own command and only when the user asks for it.
struct ProcedureStep {
  std::string name, layer, kind;
  std::vector<std::string> argv;
};
struct Procedure {
  std::vector<ProcedureStep> steps;
};
Result<Procedure> parseProcedure(const nlohmann::json& j);
nlohmann::json toJson(const Procedure& p);
// The Kernodeck subcommands a procedure may name ("reference verify", "sample check", ...).
bool allowedKernodeckStep(const std::vector<std::string>& argv);

// MANIFEST.sha256: "HEX64  relative/path" lines. Paths must be relative, without "." or
// ".." components; an error names the line.
struct ManifestEntry {
  std::string sha256, path;
};
Result<std::vector<ManifestEntry>> parseDossierManifest(std::string_view text);

// A document file read and parsed as JSON: Io/NotFound when it cannot be read (exit 3),
// Invalid when it is not JSON (exit 2); messages start with `path`.
Result<nlohmann::json> readJsonFile(const std::string& path, size_t limit = 64u << 20);

}  // namespace kernodeck::record
