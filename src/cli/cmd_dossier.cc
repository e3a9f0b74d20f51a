// kernodeck dossier build|verify|replay DIR: the final folder of a reproduction, its signature and its replay.
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "commands.h"
#include "dossier_signature.h"
#include "kernodeck/record/record.h"
#include "kernodeck/util/safe_file.h"
#include "options.h"
#include "record_flags.h"
#include "sealed_exec.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

namespace {

// The options of `dossier build|verify|replay`, as given.
struct DossierFlags {
  bool help = false, json = false;
  std::string output, dir, reference = "reference.json", outputs, python, repo, work, signKey, keyFile, wheels, image;
  std::vector<std::string> reports, includes, inputRoots;
  bool runProject = false, allowSdist = false, gpu = false, allowNetwork = false;
};

// Declares every option of the three actions into `opts`, filling `f`.
void addDossierOptions(po::options_description& opts, DossierFlags& f) {
  opts.add_options()("help,h", po::bool_switch(&f.help), "show this help")(
      "json", po::bool_switch(&f.json), "print JSON")("output,o", po::value(&f.output), "write the report to FILE")(
      "reference", po::value(&f.reference), "build: the reference (default reference.json)")(
      "report", po::value(&f.reports)->composing(), "build: a check report to include (repeatable)")(
      "outputs", po::value(&f.outputs),
      "build: the sample folder the procedure checks (default: the reference's --outputs)")(
      "include", po::value(&f.includes)->composing(),
      "build: a file or folder of yours to carry under files/ (repeatable)")(
      "run", po::bool_switch(&f.runProject),
      "replay: replay the project itself in a fresh folder (code, data, venv, entry point, sample check)")(
      "python", po::value(&f.python),
      "replay --run: use this interpreter as it is instead of a new venv from the recorded one")(
      "repo", po::value(&f.repo),
      "replay --run: clone the code from this repository when the dossier carries no code.tar")(
      "work", po::value(&f.work),
      "replay --run: the fresh folder to replay in, kept afterwards (absent or empty; default a temporary one)")(
      "input-root", po::value(&f.inputRoots)->composing(),
      "build: a folder besides the code root that the reference's data, weights and outputs may lie in "
      "(repeatable)")("wheels", po::value(&f.wheels),
                      "build: a folder of wheels the rebuild installs: carried under wheels/, locked by sha256 in "
                      "pylock.toml")(
      "sign-key", po::value(&f.signKey),
      "build: sign MANIFEST.sha256 with this private key (PEM, ECDSA P-256 or Ed25519) into "
      "MANIFEST.sha256.dsse")("key", po::value(&f.keyFile),
                              "verify, replay: refuse a dossier that is not signed by this public key (PEM)")(
      "allow-network", po::bool_switch(&f.allowNetwork),
      "replay --run: when the kernel refuses a network namespace, run pip and the entry point with this host's "
      "network anyway (default: refuse, exit 3)")(
      "allow-sdist", po::bool_switch(&f.allowSdist),
      "replay: let pip build source distributions (runs their setup code); default: wheels only")(
      "image", po::value(&f.image),
      "replay --run: run the environment and run steps inside this image with podman (REF@sha256:..., no network)")(
      "gpu", po::bool_switch(&f.gpu), "replay --run --image: pass every NVIDIA GPU through CDI (nvidia.com/gpu=all)");
}

// The options that belong together: a folder, --image with replay --run only, --gpu with
// --image. -1 to go on, else the usage exit code (after one line).
int checkDossierFlags(const std::string& verb, const std::string& cmd, const DossierFlags& f) {
  if (f.dir.empty()) {
    std::fprintf(stderr, "kernodeck %s: a folder is required\n", cmd.c_str());
    return report::kExitUsage;
  }
  if (!f.image.empty() && (verb != "replay" || !f.runProject))
    return usageError(cmd, "--image is a `dossier replay --run` option");
  if (f.gpu && f.image.empty()) return usageError(cmd, "--gpu passes the GPU into the --image container: give --image");
  if (f.allowNetwork && (verb != "replay" || !f.runProject))
    return usageError(cmd, "--allow-network is a `dossier replay --run` option");
  if (!f.image.empty())
    if (auto d = record::imageDigest(f.image); !d.ok()) return usageError(cmd, d.error().message);
  return -1;
}

// `dossier build`: the reference and reports loaded, the dossier written and, with --sign-key,
// its manifest signed.
int dossierBuild(const std::string& cmd, const DossierFlags& f) {
  record::DossierOptions o;
  o.dir = f.dir;
  o.outputs = f.outputs;
  o.includes = f.includes;
  o.inputRoots = f.inputRoots;
  o.wheels = f.wheels;
  auto ref = loadReference(f.reference);
  if (!ref.ok()) return documentError(cmd, ref.error());
  o.reference = std::move(ref).value();
  for (const auto& p : f.reports) {
    auto rep = loadDocument<record::ReportDoc>(p, [](const nlohmann::json& j) { return record::parseReportDoc(j); });
    if (!rep.ok()) return documentError(cmd, rep.error());
    if (rep->schema.empty()) return documentError(cmd, Error::Invalid(p + " is not a kernodeck.report/v1 report"));
    o.reports.push_back(std::move(rep).value());
  }
  std::optional<attest::Key> key;
  if (!f.signKey.empty()) {
    auto k = attest::Key::fromFile(f.signKey);
    if (!k.ok() || !k->isPrivate())
      return documentError(cmd, Error::Invalid("--sign-key: " + (k.ok() ? std::string("a private key is needed to sign")
                                                                        : k.error().message)));
    key = std::move(*k);
  }
  report::Report r = record::buildDossier(o);
  // A sealed dossier is signed whatever its verdict (a failed or incomplete one is evidence
  // too); one whose manifest was not written is not.
  bool sealed = false;
  for (const auto& st : r.steps()) sealed |= st.name == "manifest" && st.status == report::StepStatus::Passed;
  if (key && sealed) {
    if (Status st = signDossier(f.dir, *key); !st.ok()) return documentError(cmd, st.error());
    r.section("signature") = {
        {"file", kDossierSignatureFile}, {"keyid", key->keyid()}, {"algorithm", key->algorithm()}};
  }
  return finish(cmd, r, f.json, f.output);
}

// `dossier replay --run`: the project itself replayed in a fresh folder, sealed (or in --image).
int replayRun(const std::string& cmd, DossierFlags f, record::ReplayOptions o, record::Reference ref,
              const std::optional<python::Lock>& lock) {
  // The interpreter runs with the code's folder as its working directory: made absolute here.
  if (std::error_code ec; !f.python.empty() && f.python.find('/') != std::string::npos)
    f.python = std::filesystem::absolute(f.python, ec).string();
  Sealing sealing = f.image.empty() ? probeSealing(selfPath()) : Sealing{};
  if (!f.image.empty())
    sealing.user = "uid " + std::to_string(::getuid()) + " inside " + f.image + " with podman",
    sealing.network = "without network (--network=none)";
  // No namespace: fail closed before pip runs, unless networked replay was asked for by name.
  if (f.image.empty() && sealing.prefix.empty()) {
    if (!f.allowNetwork) {
      std::fprintf(stderr,
                   "kernodeck %s: --run: refusing to run the dossier's code with this host's network: %s; "
                   "--allow-network runs it anyway, --image runs it in a container without network\n",
                   cmd.c_str(), sealing.reason.c_str());
      return report::kExitIncomplete;
    }
    sealing.network = "WITH this host's network (--allow-network): " + sealing.reason;
  }
  record::ProjectReplayOptions po{.dossier = std::move(o),
                                  .reference = std::move(ref),
                                  .python = f.python,
                                  .repo = f.repo,
                                  .work = f.work,
                                  .allowSdist = f.allowSdist,
                                  .isolate = sealing.prefix,
                                  .network = sealing.network,
                                  .lock = lock,
                                  .image = f.image,
                                  .gpu = f.gpu};
  // Said before anything starts: what runs, as whom, with or without network.
  std::fprintf(stderr,
               "kernodeck dossier replay: --run runs the dossier's code (pip installing its requirements%s, then its "
               "entry point) as %s, %s\n",
               f.allowSdist ? ", source distributions allowed" : ", wheels only", sealing.user.c_str(),
               sealing.network.c_str());
  return finish(cmd, record::replayProject(po), f.json, f.output);
}

// `dossier replay` of a verified manifest: the procedure, reference and lock parsed before use,
// then the plan printed or, with --run, the project replayed.
int dossierReplay(const std::string& cmd, const DossierFlags& f, std::vector<record::ManifestEntry> manifest) {
  // Read once: everything below reads the private copy, which the replay's verify step hashes.
  auto copy = record::DossierCopy::make(f.dir);
  if (!copy.ok()) return documentError(cmd, copy.error());
  const std::string& dir = copy->path();
  record::ReplayOptions o;
  o.dir = dir;
  o.shown = f.dir;
  // An error names the dossier as the user named it, not the private copy.
  auto named = [&](Error e) {
    for (size_t at; (at = e.message.find(dir)) != std::string::npos;) e.message.replace(at, dir.size(), f.dir);
    return documentError(cmd, e);
  };
  o.manifest = std::move(manifest);
  auto procedure = loadDocument<record::Procedure>(dir + "/procedure.json",
                                                   [](const nlohmann::json& j) { return record::parseProcedure(j); });
  if (!procedure.ok()) return named(procedure.error());
  o.procedure = std::move(procedure).value();
  auto ref = loadReference(dir + "/reference.json");
  if (!ref.ok()) return named(ref.error());
  // The dossier's lock, when it carries one (dossier build --wheels), parsed before use.
  std::optional<python::Lock> lock;
  if (std::any_of(o.manifest.begin(), o.manifest.end(), [](const auto& e) { return e.path == "pylock.toml"; })) {
    auto text = util::readFileLimited(dir + "/pylock.toml", 16u << 20);
    if (!text.ok()) return named(text.error());
    auto l = python::parsePylock(*text);
    if (!l.ok()) return named(Error::Corrupt(dir + "/pylock.toml: " + l.error().message));
    lock = std::move(l).value();
  }
  if (f.runProject) return replayRun(cmd, f, std::move(o), std::move(ref).value(), lock);
  record::ReplayPlanOptions plan{.dossier = f.dir,  // as printed: nothing is read from it
                                 .root = "REPLAY",
                                 .python = f.python,
                                 .repo = f.repo,
                                 .allowSdist = f.allowSdist,
                                 .isolate = probeSealing(selfPath()).prefix,
                                 .lock = lock};
  return finish(cmd, record::replayDossier(o, *ref, plan), f.json, f.output);
}

// `dossier verify` and `dossier replay`: the key (--key) loaded before anything is read, the
// manifest parsed; a replay of a dossier not signed by the key never starts.
int dossierVerifyOrReplay(const std::string& verb, const std::string& cmd, const DossierFlags& f) {
  const std::string& dir = f.dir;
  // --key: the public key a dossier must be signed by, loaded before anything is read.
  std::optional<attest::Key> key;
  if (!f.keyFile.empty()) {
    auto k = attest::Key::fromFile(f.keyFile);
    if (!k.ok()) return documentError(cmd, Error::Invalid("--key: " + k.error().message));
    key = std::move(*k);
  }
  // verify and replay: the manifest first (and for replay the procedure), each parsed before use.
  auto manifestText = util::readFileLimited(dir + "/MANIFEST.sha256", 16u << 20);
  if (!manifestText.ok()) return documentError(cmd, manifestText.error());
  auto manifest = record::parseDossierManifest(*manifestText);
  if (!manifest.ok()) return documentError(cmd, Error(manifest.error().kind, dir + "/" + manifest.error().message));
  if (verb == "verify") {
    report::Report r = record::verifyDossier(dir, *manifest);
    if (key) checkDossierSignature(dir, *manifestText, *key, r);
    return finish(cmd, r, f.json, f.output);
  }
  if (key) {
    // A replay of a dossier that is not signed by the key never starts: the report says why.
    report::Report check("dossier replay");
    check.declareSteps({"verify"});
    check.subject()["reference"] = dir;
    bool signedByKey = false;
    check.runStep("verify", [&]() -> Status {
      signedByKey = checkDossierSignature(dir, *manifestText, *key, check);
      return {};
    });
    if (!signedByKey) return finish(cmd, check, f.json, f.output);
    std::fprintf(stderr, "kernodeck dossier replay: MANIFEST.sha256 is signed by key %s\n", key->keyid().c_str());
  }
  return dossierReplay(cmd, f, std::move(manifest).value());
}

}  // namespace

int runDossier(const std::vector<std::string>& argsIn) {
  if (!argsIn.empty() && argsIn[0] == "_sealed")  // internal: a replay's sealed command (sealed_exec.h)
    return sealedExec(std::vector<std::string>(argsIn.begin() + 1, argsIn.end()));
  if (int rc = verbOrHelp(
          argsIn, "dossier",
          "usage: kernodeck dossier build|verify|replay DIR [options]\n\n"
          "  build   write the dossier: reference, reports, inventory, procedure, MANIFEST.sha256, index.html\n"
          "  verify  check every file against MANIFEST.sha256\n"
          "  replay  verify, then print the plan --run carries out (each action checked); --run replays the project in "
          "a fresh folder");
      rc >= 0)
    return rc;
  std::string verb = argsIn[0];
  std::vector<std::string> args(argsIn.begin() + 1, argsIn.end());
  DossierFlags f;
  po::options_description opts("usage: kernodeck dossier build|verify|replay DIR [options]\n\noptions");
  addDossierOptions(opts, f);
  if (verb != "build" && verb != "verify" && verb != "replay")
    return usageVerb("dossier", verb, "build, verify or replay");
  std::string cmd = "dossier " + verb;
  if (int rc = parseOptions(cmd, args, opts, {&f.dir}); rc >= 0) return rc;
  if (f.help) return printHelp(opts);
  if (int rc = checkDossierFlags(verb, cmd, f); rc >= 0) return rc;
  if (verb == "build") return dossierBuild(cmd, f);
  return dossierVerifyOrReplay(verb, cmd, f);
}

}  // namespace kernodeck::cli
