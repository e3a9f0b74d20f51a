// The reproducibility record: a reference declared before any comparison
// (kernodeck.reference/v1), its verification, the sample-output check, the
// comparison of two records, and the dossier folder another run can replay.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/record/documents.h"
#include "kernodeck/python/pylock.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/result.h"

namespace kernodeck::record {

struct NamedInput {
  std::string name, path, provenance, access;
};

struct ReferenceOptions {
  std::string repo, entryPoint, preprocessing;
  std::string outputs;  // the folder the entry point writes its outputs to (--outputs)
  std::vector<std::string> configs;
  std::map<std::string, std::string> params;
  std::vector<NamedInput> data, weights;
  std::string packagesReport;  // a kernodeck audit JSON report (image or dir:/)
  std::string requirements;    // or a requirements file
  // --lock: a PEP 751 pylock.toml, recorded (path, sha256, the packages and wheels it locks)
  // as packages.lock; a lock parsePylock refuses is an Error::Corrupt naming the file.
  std::string lock;
  std::string python;      // the base interpreter a replay makes its venv from (--python)
  std::string hostRecord;  // kernodeck.host/v1; else the host is read under hostRoot
  std::string hostRoot = "/";
  std::string accelerator;                         // the accelerator the project expects: cuda, rocm, cpu
  std::map<std::string, std::string> seeds;        // --seed NAME=VALUE
  std::map<std::string, std::string> determinism;  // --determinism NAME=VALUE (torch flags as the project sets them)
  std::string expected;                            // folder of expected outputs
  std::string ids;                                 // file name of the ids inside the output folders
  std::vector<std::string> criteria, whys;         // each criterion and why it was chosen, in pairs
  // The folder the reference is written to: relative paths are recorded relative to it, so
  // that the reference means the same files wherever it is read from.
  std::string referenceDir;
  // `--revise WHY`: the reference being replaced (already read from the output file) and why.
  // Its criteria, declaration and first check go into the new one's `revisions`.
  std::optional<Reference> previous;
  std::string revise;
};

// The usage checks of `reference init` that need no file: every criterion parses (an unknown
// metric, a negative tolerance, cosine>=1.5, knn:0 are errors), each has a non-empty --why,
// criteria only with --expected. Error::Invalid (exit 2) naming the option.
Status checkDeclaration(const ReferenceOptions& o);

// Records in the reference file at `path` when a check first compared outputs against it
// (`first_checked`, set once, the rest of the document untouched). Returns false when it was
// already recorded. A reference inside a dossier (MANIFEST.sha256 beside it) is sealed and
// never written: false too.
Result<bool> recordFirstCheck(const std::string& path);

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
  std::string dir, outputs;  // outputs: the sample folder the procedure checks
  Reference reference;
  std::vector<ReportDoc> reports;     // check reports to include (kernodeck.report/v1)
  std::vector<std::string> includes;  // the user's own files (--include), carried under files/
  // Folders besides the code root (--input-root) that a path the reference names may lie in:
  // anything else (`../../../../etc/shadow`) is refused, not carried.
  std::vector<std::string> inputRoots;
  // --wheels: a folder of wheels the rebuild installs; carried under wheels/ and listed with
  // their sha256 in the dossier's pylock.toml, which a replay installs with --require-hashes.
  std::string wheels;
};
report::Report buildDossier(const DossierOptions& o);
// Checks every file of the dossier against its MANIFEST.sha256 (parsed by the caller).
report::Report verifyDossier(const std::string& dir, const std::vector<ManifestEntry>& manifest);

// `dossier replay`'s private copy of a dossier (issue 39 section 10): every entry of DIR copied
// once, into a new folder only this user can enter (0700, under /tmp), so that what the replay
// verifies, parses (procedure, reference, lock), unpacks (code.tar) and places is the same bytes:
// whoever can write DIR during the replay changes nothing it reads. A link or any other entry
// that is not a regular file is copied as an empty file (so the manifest entry it stands for
// reads as modified). Removed with the object.
class DossierCopy {
 public:
  static Result<DossierCopy> make(const std::string& dir);
  DossierCopy(DossierCopy&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  DossierCopy& operator=(DossierCopy&&) = delete;
  DossierCopy(const DossierCopy&) = delete;
  ~DossierCopy();
  const std::string& path() const { return path_; }

 private:
  explicit DossierCopy(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

struct ReplayOptions {
  std::string dir;                      // the dossier (its private copy: DossierCopy)
  std::string shown;                    // the dossier as named, for the report ("" : dir)
  Procedure procedure;                  // the dossier's procedure.json, parsed
  std::vector<ManifestEntry> manifest;  // its MANIFEST.sha256, parsed
};

// `dossier replay --run`: the project itself replayed in a fresh folder, as one plan of
// actions in the steps code, place, environment, run and check. The same plan is printed
// without --run, written into procedure.md by `dossier build`, and executed with --run.
struct ReplayAction {
  enum class Kind { Mkdir, Unpack, Command, Place, Write, Remove, Check };
  Kind kind = Kind::Command;
  std::string step;               // code | place | environment | run | check
  std::vector<std::string> argv;  // Command: the program and its arguments (never a shell)
  std::string cwd;                // Command: folder, relative to the replay folder
  std::string from, to;      // Unpack, Place: in the dossier; Place, Mkdir, Write, Remove, Check: in the replay folder
  std::string sha256, what;  // Place: the reference's hash and what it is ("weights 'model'")
  std::string content;       // Write
  std::map<std::string, std::string> env;  // Command: the recorded variables that change results
  std::string problem;                     // why this action cannot be done (a field that escapes, nothing carried...)
};
struct ReplayPlanOptions {
  std::string dossier;      // the dossier folder, as printed and read
  std::string root;         // the replay folder, as printed and run in
  std::string python;       // --python: use this interpreter, no venv
  std::string repo;         // --repo: clone the code from here when the dossier has no code.tar
  bool allowSdist = false;  // --allow-sdist: pip may build from source (default: wheels only)
  // Without --run: the argv prefix pip's dry run is started under (ProjectReplayOptions::isolate).
  std::vector<std::string> isolate = {};
  // The dossier's pylock.toml, parsed, when it carries one: its wheels are placed by hash and
  // installed with --require-hashes from the replay's wheels/ folder only.
  std::optional<python::Lock> lock = {};
  // --image REF@sha256:...: the environment and run steps' commands run inside that image
  // (the recorded interpreter is the image's, so it is not looked for on this host).
  std::string image = {};
};
// The plan for a reference and procedure; `carried` is the dossier's file list. It reads
// nothing but whether the recorded interpreter exists.
std::vector<ReplayAction> planReplay(const Reference& ref, const Procedure& procedure,
                                     const std::vector<std::string>& carried, const ReplayPlanOptions& o);
// One action as a person would type it (a display, never run through a shell).
std::string describe(const ReplayAction& a, const ReplayPlanOptions& o);

// procedure.md: the plan as commands a person can follow, with the code, the environment and
// the criteria (`criteriaMd`, one "- `X` because: WHY" line each) said in words.
std::string procedureMarkdown(const Reference& ref, const Procedure& procedure, const std::vector<std::string>& carried,
                              const std::string& criteriaMd);

struct ProjectReplayOptions {
  ReplayOptions dossier;     // the dossier, its procedure and manifest, parsed
  Reference reference;       // its reference.json, parsed
  std::string python, repo;  // as in ReplayPlanOptions
  std::string work;          // --work: the fresh folder (absent or empty); default a temporary one, removed after
  bool allowSdist = false;   // --allow-sdist
  // The argv prefix the environment and run steps' commands are started under (the CLI's
  // `kernodeck _sealed --`: a new network namespace with only loopback), empty when the
  // kernel refused one; `network` says which, in words, for the replay.network finding.
  std::vector<std::string> isolate = {};
  std::string network = {};
  std::optional<python::Lock> lock = {};  // as in ReplayPlanOptions
  // --image REF@sha256:...: the environment and run steps in that image with podman (no
  // network, the dossier read-only, the replay folder read-write, both at their own paths);
  // --gpu: every NVIDIA GPU passed through CDI. The image and its digest go into the subject.
  std::string image = {};
  bool gpu = false;
};
report::Report replayProject(const ProjectReplayOptions& o);
// The digest of an --image REF@sha256:HEX (64 lower-case hex digits); Invalid (exit 2) for a
// tag, a digest of another algorithm or length, or nothing before the @.
Result<std::string> imageDigest(const std::string& ref);
// `dossier replay` without --run: verifies the dossier and prints the plan --run would carry
// out, each action checked (`replay.cannot` for one that could not be done); runs nothing.
report::Report replayDossier(const ReplayOptions& o, const Reference& ref, const ReplayPlanOptions& plan);

}  // namespace kernodeck::record
