// kernodeck reference init|show|verify, sample check, dossier build|verify|replay, diff, resume check|inspect.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "commands.h"
#include "dossier_signature.h"
#include "kernodeck/probe/resume.h"
#include "kernodeck/record/record.h"
#include "kernodeck/record/resume_check.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "options.h"
#include "sealed_exec.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

namespace {

std::string selfPath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "kernodeck";
}

int finish(const std::string& name, const report::Report& r, bool json, const std::string& output,
           const std::string& failOn = "error") {
  auto t = report::parseFailOn(failOn);
  if (!t.ok()) {
    std::fprintf(stderr, "kernodeck %s: %s\n", name.c_str(), t.error().message.c_str());
    return report::kExitUsage;
  }
  if (int rc = emit(json ? r.toJson().dump(2) + "\n" : r.toText(), output)) return rc;
  if (r.failed()) std::fprintf(stderr, "kernodeck %s: %s\n", name.c_str(), r.firstError().c_str());
  return r.exitCode(*t);
}

// The exit code for a document that could not be loaded: 2 when it was read but is not what
// the command takes (not JSON, a field of the wrong type, a hostile path), 3 when it could
// not be read at all (report::exitCodeOf decides from the error's kind).
int documentExit(const Error& e) { return report::exitCodeOf(e); }

// Prints "kernodeck CMD: MESSAGE" and returns the document's exit code.
int documentError(const std::string& cmd, const Error& e) {
  std::fprintf(stderr, "kernodeck %s: %s\n", cmd.c_str(), util::printable(e.message, 400).c_str());
  return documentExit(e);
}

// Reads a document and parses it with `parse`; errors name the file and the field.
template <class T, class Parse>
Result<T> loadDocument(const std::string& path, Parse parse) {
  KDK_TRY_ASSIGN(nlohmann::json j, record::readJsonFile(path));
  auto doc = parse(j);
  if (!doc.ok()) return doc.error().context(path);
  return std::move(doc).value();
}

// A reference, with its relative paths resolved against the folder it lies in.
Result<record::Reference> loadReference(const std::string& path) {
  KDK_TRY_ASSIGN(record::Reference ref, loadDocument<record::Reference>(
                                            path, [](const nlohmann::json& j) { return record::parseReference(j); }));
  ref.baseDir = std::filesystem::path(path).parent_path().string();
  return ref;
}

// `reference init` over `target`: a reference a check already used is replaced only with
// --revise (it then becomes ro.previous); --revise with nothing to revise is a usage error. A
// file that is not a reference at all is overwritten as before.
Status previousReference(const std::string& target, record::ReferenceOptions& ro) {
  struct stat st {};
  bool present = ::stat(target.c_str(), &st) == 0;
  bool revising = !ro.revise.empty();
  if (!present) {
    if (revising) return Error::Invalid("--revise: there is no reference at " + target + " to revise");
    return {};
  }
  auto j = record::readJsonFile(target);
  bool isReference = j.ok() && j->is_object() && j->contains("schema") && j->at("schema") == "kernodeck.reference/v1";
  if (!isReference) {
    if (revising) return Error::Invalid("--revise: " + target + " is not a kernodeck.reference/v1 to revise");
    return {};
  }
  auto ref = loadReference(target);
  if (!ref.ok())
    return Error::Invalid(ref.error().message + ": cannot tell whether a check used it; move it away first");
  if (!revising) {
    if (!ref->firstChecked.empty())
      return Error::Invalid(target + " was already used by a check (first on " + ref->firstChecked +
                            "): declaring criteria after a comparison needs --revise \"why\", which keeps the "
                            "earlier criteria in the record");
    return {};
  }
  ro.previous = std::move(ref).value();
  return {};
}

int usageVerb(const char* cmd, const std::string& verb, const char* verbs) {
  std::fprintf(stderr, "kernodeck %s: unknown action '%s' (use %s)\n", cmd, util::printable(verb, 60).c_str(), verbs);
  return report::kExitUsage;
}

// "kernodeck CMD" alone is a usage error; "kernodeck CMD --help" prints the actions. -1: go on.
int verbOrHelp(const std::vector<std::string>& args, const char* cmd, const char* usage) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    std::printf("%s\n\nRun 'kernodeck %s ACTION --help' for an action's options.\n\n%s", usage, cmd, kExitCodesHelp);
    return 0;
  }
  if (args.empty()) {
    std::fprintf(stderr, "kernodeck %s: an action is required\n%s\n", cmd, usage);
    return report::kExitUsage;
  }
  return -1;
}

}  // namespace

int runReference(const std::vector<std::string>& argsIn) {
  if (int rc = verbOrHelp(argsIn, "reference",
                          "usage: kernodeck reference init|show|verify [options]\n\n"
                          "  init    declare the reference (inputs hashed, criterion and why) before any comparison\n"
                          "  show    print a reference\n"
                          "  verify  re-hash code, configs, data and weights; say which layer moved");
      rc >= 0)
    return rc;
  std::string verb = argsIn[0];
  std::vector<std::string> args(argsIn.begin() + 1, argsIn.end());
  bool help = false, json = false;
  std::string output, reference = "reference.json";
  po::options_description opts("usage: kernodeck reference init|show|verify [options]\n\noptions");
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("json", po::bool_switch(&json), "print JSON")(
      "output,o", po::value(&output), "write to FILE (init: the reference, default reference.json)")(
      "reference", po::value(&reference), "the reference file (show, verify)");
  if (verb == "init") {
    record::ReferenceOptions ro;
    std::vector<std::string> data, weights, params, seeds, determinism;
    opts.add_options()("repo", po::value(&ro.repo), "git repository of the code")(
        "entry-point", po::value(&ro.entryPoint), "the command or script that produces the outputs")(
        "outputs", po::value(&ro.outputs), "the folder the entry point writes its outputs to")(
        "config", po::value(&ro.configs)->composing(), "configuration file (hashed; repeatable)")(
        "param", po::value(&params)->composing(), "parameter KEY=VALUE (repeatable)")(
        "preprocessing", po::value(&ro.preprocessing), "preprocessing, in words")(
        "data", po::value(&data)->composing(), "NAME=PATH[,provenance=SRC][,access=HOW] (repeatable)")(
        "weights", po::value(&weights)->composing(), "NAME=PATH[,provenance=SRC][,access=HOW] (repeatable)")(
        "packages-from", po::value(&ro.packagesReport), "a kernodeck audit --json report (image or dir:/)")(
        "requirements", po::value(&ro.requirements), "or a requirements file")(
        "lock", po::value(&ro.lock),
        "a PEP 751 pylock.toml: recorded (path, sha256, its packages and wheels); dossier build checks the wheels "
        "it carries against it")("python", po::value(&ro.python),
                                 "the base interpreter a replay makes the project's venv from (e.g. /usr/bin/python3)")(
        "host-record", po::value(&ro.hostRecord), "kernodeck.host/v1 record (default: read the host)")(
        "host-root", po::value(&ro.hostRoot), "host root to read (default /)")(
        "accelerator", po::value(&ro.accelerator),
        "the accelerator the project expects: cuda, rocm or cpu (default: as the host shows)")(
        "seed", po::value(&seeds)->composing(), "a seed the project sets, NAME=VALUE (repeatable)")(
        "determinism", po::value(&determinism)->composing(),
        "a determinism setting the project makes, NAME=VALUE, e.g. "
        "torch.use_deterministic_algorithms=True (repeatable)")("expected", po::value(&ro.expected),
                                                                "folder of expected outputs")(
        "ids", po::value(&ro.ids), "file name of the sample ids inside the output folders")(
        "criterion", po::value(&ro.criteria)->composing(),
        "exact | abs<=X | rel<=X | cosine>=X | topk:K>=X | knn:K>=X, declared now (repeatable)")(
        "why", po::value(&ro.whys)->composing(),
        "why this criterion and threshold, one per --criterion (kept in the record)")(
        "revise", po::value(&ro.revise),
        "replace a reference a check already used: WHY, kept with the earlier criteria in its revisions");
    if (int rc = parseOptions("reference init", args, opts); rc >= 0) return rc;
    if (help) return printHelp(opts);
    ro.referenceDir = std::filesystem::path(output.empty() ? "reference.json" : output).parent_path().string();
    if (ro.referenceDir.empty()) ro.referenceDir = ".";
    for (const auto& p : params) {
      size_t eq = p.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "kernodeck reference init: --param takes KEY=VALUE\n");
        return report::kExitUsage;
      }
      ro.params[p.substr(0, eq)] = p.substr(eq + 1);
    }
    for (auto* list : {&seeds, &determinism})
      for (const auto& p : *list) {
        size_t eq = p.find('=');
        if (eq == std::string::npos || eq == 0) {
          std::fprintf(stderr, "kernodeck reference init: --%s takes NAME=VALUE\n",
                       list == &seeds ? "seed" : "determinism");
          return report::kExitUsage;
        }
        (list == &seeds ? ro.seeds : ro.determinism)[p.substr(0, eq)] = p.substr(eq + 1);
      }
    for (auto* list : {&data, &weights})
      for (const auto& d : *list) {
        auto in = record::parseNamedInput(d);
        if (!in.ok()) {
          std::fprintf(stderr, "kernodeck reference init: %s\n", in.error().message.c_str());
          return report::kExitUsage;
        }
        (list == &data ? ro.data : ro.weights).push_back(*in);
      }
    std::string target = output.empty() ? "reference.json" : output;
    if (Status st = previousReference(target, ro); !st.ok()) {
      std::fprintf(stderr, "kernodeck reference init: %s\n", util::printable(st.error().message, 400).c_str());
      return documentExit(st.error());
    }
    if (Status st = record::checkDeclaration(ro); !st.ok()) return usageError("reference init", st.error().message);
    report::Report r("reference init");
    r.declareSteps({"record"});
    nlohmann::json ref;
    std::optional<Error> failure;
    r.runStep("record", [&]() -> Status {
      auto built = record::buildReference(ro, r);
      if (!built.ok()) return *(failure = built.error());
      ref = std::move(built).value();
      return {};
    });
    // A file given that is not what the option takes (not a repository, an output that is not a
    // tensor, a host record of the wrong shape) is a usage error; one that cannot be read, not.
    if (r.failed()) {
      int rc = finish("reference init", r, json, "");
      return rc == report::kExitIncomplete && failure ? documentExit(*failure) : rc;
    }
    if (int rc = emit(ref.dump(2) + "\n", target)) return rc;
    return finish("reference init", r, json, "", "none");
  }
  if (verb == "show") {
    if (int rc = parseOptions("reference show", args, opts); rc >= 0) return rc;
    if (help) return printHelp(opts);
    auto ref = loadReference(reference);
    if (!ref.ok()) return documentError("reference show", ref.error());
    return emit(json ? ref->json.dump(2) + "\n" : record::referenceText(*ref), output);
  }
  if (verb == "verify") {
    if (int rc = parseOptions("reference verify", args, opts); rc >= 0) return rc;
    if (help) return printHelp(opts);
    auto ref = loadReference(reference);
    if (!ref.ok()) return documentError("reference verify", ref.error());
    return finish("reference verify", record::verifyReference(*ref), json, output);
  }
  return usageVerb("reference", verb, "init, show or verify");
}

int runSample(const std::vector<std::string>& argsIn) {
  if (int rc = verbOrHelp(argsIn, "sample",
                          "usage: kernodeck sample check OUTDIR --reference reference.json\n\n"
                          "  check   reload the outputs in OUTDIR and check them against the reference");
      rc >= 0)
    return rc;
  if (argsIn[0] != "check") return usageVerb("sample", argsIn[0], "check");
  std::vector<std::string> args(argsIn.begin() + 1, argsIn.end());
  bool help = false, json = false;
  std::string output, reference = "reference.json", outDir, failOn = "error";
  po::options_description opts("usage: kernodeck sample check OUTDIR --reference reference.json\n\noptions");
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("json", po::bool_switch(&json), "print JSON")(
      "output,o", po::value(&output), "write the report to FILE")("reference", po::value(&reference),
                                                                  "the reference (default reference.json)")(
      "fail-on", po::value(&failOn), "exit 1 on findings at or above: info, warning, error (default), none");
  if (int rc = parseOptions("sample check", args, opts, {&outDir}); rc >= 0) return rc;
  if (help) return printHelp(opts);
  if (outDir.empty()) {
    std::fprintf(stderr, "kernodeck sample check: an output folder is required\n");
    return report::kExitUsage;
  }
  auto ref = loadReference(reference);
  if (!ref.ok()) return documentError("sample check", ref.error());
  report::Report r = record::sampleCheck(outDir, *ref);
  // The reference was used for a comparison: said in it once, so that criteria declared after
  // this are known to be (reference init then needs --revise).
  if (!r.steps().empty() && r.steps()[0].status == report::StepStatus::Passed)
    if (auto marked = record::recordFirstCheck(reference); !marked.ok())
      r.add("reference.first_check.unrecorded", report::Severity::Warning,
            "the first use of " + reference + " by a check could not be recorded in it (" + marked.error().message +
                "): reference init cannot tell that it was used",
            {{"path", reference}});
  return finish("sample check", r, json, output, failOn);
}

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
  bool help = false, json = false;
  std::string output, dir, reference = "reference.json", outputs, python, repo, work, signKey, keyFile, wheels, image;
  std::vector<std::string> reports, includes, inputRoots;
  bool runProject = false, allowSdist = false, gpu = false;
  po::options_description opts("usage: kernodeck dossier build|verify|replay DIR [options]\n\noptions");
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("json", po::bool_switch(&json), "print JSON")(
      "output,o", po::value(&output), "write the report to FILE")("reference", po::value(&reference),
                                                                  "build: the reference (default reference.json)")(
      "report", po::value(&reports)->composing(), "build: a check report to include (repeatable)")(
      "outputs", po::value(&outputs),
      "build: the sample folder the procedure checks (default: the reference's --outputs)")(
      "include", po::value(&includes)->composing(),
      "build: a file or folder of yours to carry under files/ (repeatable)")(
      "run", po::bool_switch(&runProject),
      "replay: replay the project itself in a fresh folder (code, data, venv, entry point, sample check)")(
      "python", po::value(&python),
      "replay --run: use this interpreter as it is instead of a new venv from the recorded one")(
      "repo", po::value(&repo),
      "replay --run: clone the code from this repository when the dossier carries no code.tar")(
      "work", po::value(&work),
      "replay --run: the fresh folder to replay in, kept afterwards (absent or empty; default a temporary one)")(
      "input-root", po::value(&inputRoots)->composing(),
      "build: a folder besides the code root that the reference's data, weights and outputs may lie in "
      "(repeatable)")("wheels", po::value(&wheels),
                      "build: a folder of wheels the rebuild installs: carried under wheels/, locked by sha256 in "
                      "pylock.toml")(
      "sign-key", po::value(&signKey),
      "build: sign MANIFEST.sha256 with this private key (PEM, ECDSA P-256 or Ed25519) into "
      "MANIFEST.sha256.dsse")("key", po::value(&keyFile),
                              "verify, replay: refuse a dossier that is not signed by this public key (PEM)")(
      "allow-sdist", po::bool_switch(&allowSdist),
      "replay: let pip build source distributions (runs their setup code); default: wheels only")(
      "image", po::value(&image),
      "replay --run: run the environment and run steps inside this image with podman (REF@sha256:..., no network)")(
      "gpu", po::bool_switch(&gpu), "replay --run --image: pass every NVIDIA GPU through CDI (nvidia.com/gpu=all)");
  if (verb != "build" && verb != "verify" && verb != "replay")
    return usageVerb("dossier", verb, "build, verify or replay");
  std::string cmd = "dossier " + verb;
  if (int rc = parseOptions(cmd, args, opts, {&dir}); rc >= 0) return rc;
  if (help) return printHelp(opts);
  if (dir.empty()) {
    std::fprintf(stderr, "kernodeck %s: a folder is required\n", cmd.c_str());
    return report::kExitUsage;
  }
  if (!image.empty() && (verb != "replay" || !runProject))
    return usageError(cmd, "--image is a `dossier replay --run` option");
  if (gpu && image.empty()) return usageError(cmd, "--gpu passes the GPU into the --image container: give --image");
  if (!image.empty())
    if (auto d = record::imageDigest(image); !d.ok()) return usageError(cmd, d.error().message);
  if (verb == "build") {
    record::DossierOptions o;
    o.dir = dir;
    o.outputs = outputs;
    o.includes = includes;
    o.inputRoots = inputRoots;
    o.wheels = wheels;
    auto ref = loadReference(reference);
    if (!ref.ok()) return documentError(cmd, ref.error());
    o.reference = std::move(ref).value();
    for (const auto& p : reports) {
      auto rep = loadDocument<record::ReportDoc>(p, [](const nlohmann::json& j) { return record::parseReportDoc(j); });
      if (!rep.ok()) return documentError(cmd, rep.error());
      if (rep->schema.empty()) return documentError(cmd, Error::Invalid(p + " is not a kernodeck.report/v1 report"));
      o.reports.push_back(std::move(rep).value());
    }
    std::optional<attest::Key> key;
    if (!signKey.empty()) {
      auto k = attest::Key::fromFile(signKey);
      if (!k.ok() || !k->isPrivate())
        return documentError(
            cmd, Error::Invalid("--sign-key: " +
                                (k.ok() ? std::string("a private key is needed to sign") : k.error().message)));
      key = std::move(*k);
    }
    report::Report r = record::buildDossier(o);
    // A sealed dossier is signed whatever its verdict (a failed or incomplete one is evidence
    // too); one whose manifest was not written is not.
    bool sealed = false;
    for (const auto& st : r.steps()) sealed |= st.name == "manifest" && st.status == report::StepStatus::Passed;
    if (key && sealed) {
      if (Status st = signDossier(dir, *key); !st.ok()) return documentError(cmd, st.error());
      r.section("signature") = {
          {"file", kDossierSignatureFile}, {"keyid", key->keyid()}, {"algorithm", key->algorithm()}};
    }
    return finish(cmd, r, json, output);
  }
  // --key: the public key a dossier must be signed by, loaded before anything is read.
  std::optional<attest::Key> key;
  if (!keyFile.empty()) {
    auto k = attest::Key::fromFile(keyFile);
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
    return finish(cmd, r, json, output);
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
    if (!signedByKey) return finish(cmd, check, json, output);
    std::fprintf(stderr, "kernodeck dossier replay: MANIFEST.sha256 is signed by key %s\n", key->keyid().c_str());
  }
  record::ReplayOptions o;
  o.dir = dir;
  o.manifest = std::move(manifest).value();
  auto procedure = loadDocument<record::Procedure>(dir + "/procedure.json",
                                                   [](const nlohmann::json& j) { return record::parseProcedure(j); });
  if (!procedure.ok()) return documentError(cmd, procedure.error());
  o.procedure = std::move(procedure).value();
  auto ref = loadReference(dir + "/reference.json");
  if (!ref.ok()) return documentError(cmd, ref.error());
  // The dossier's lock, when it carries one (dossier build --wheels), parsed before use.
  std::optional<record::Lock> lock;
  if (std::any_of(o.manifest.begin(), o.manifest.end(), [](const auto& e) { return e.path == "pylock.toml"; })) {
    auto text = util::readFileLimited(dir + "/pylock.toml", 16u << 20);
    if (!text.ok()) return documentError(cmd, text.error());
    auto l = record::parsePylock(*text);
    if (!l.ok()) return documentError(cmd, Error::Corrupt(dir + "/pylock.toml: " + l.error().message));
    lock = std::move(l).value();
  }
  if (runProject) {
    // The interpreter runs with the code's folder as its working directory: made absolute here.
    if (std::error_code ec; !python.empty() && python.find('/') != std::string::npos)
      python = std::filesystem::absolute(python, ec).string();
    Sealing sealing = image.empty() ? probeSealing(selfPath()) : Sealing{};
    if (!image.empty())
      sealing.user = "uid " + std::to_string(::getuid()) + " inside " + image + " with podman",
      sealing.network = "without network (--network=none)";
    record::ProjectReplayOptions po{.dossier = std::move(o),
                                    .reference = std::move(ref).value(),
                                    .python = python,
                                    .repo = repo,
                                    .work = work,
                                    .allowSdist = allowSdist,
                                    .isolate = sealing.prefix,
                                    .network = sealing.network,
                                    .lock = lock,
                                    .image = image,
                                    .gpu = gpu};
    // Said before anything starts: what runs, as whom, with or without network.
    std::fprintf(stderr,
                 "kernodeck dossier replay: --run runs the dossier's code (pip installing its requirements%s, then its "
                 "entry point) as %s, %s\n",
                 allowSdist ? ", source distributions allowed" : ", wheels only", sealing.user.c_str(),
                 sealing.network.c_str());
    return finish(cmd, record::replayProject(po), json, output);
  }
  record::ReplayPlanOptions plan{.dossier = dir,
                                 .root = "REPLAY",
                                 .python = python,
                                 .repo = repo,
                                 .allowSdist = allowSdist,
                                 .isolate = probeSealing(selfPath()).prefix,
                                 .lock = lock};
  return finish(cmd, record::replayDossier(o, *ref, plan), json, output);
}

namespace {

const char* const kResumeCheckUsage =
    "usage: kernodeck resume check [--steps N --at K --atol X --seed S]     the built-in exercise (LibTorch)\n"
    "       kernodeck resume check --weights NAME [options] --cmd 'COMMAND'   your own training\n"
    "       kernodeck resume check --weights NAME [options] -- PROGRAM ARG...\n"
    "\n"
    "With a command, the check runs your training three times in a fresh work folder, never\n"
    "through a shell: straight to step N (--steps); to step K (--at), saving a checkpoint;\n"
    "resumed from that checkpoint to N. It compares the straight and the resumed run's final\n"
    "weights (--weights: a .pt, .pth, .safetensors or .npy file the command writes in {out})\n"
    "under --criterion, printing the measured value against the threshold, and says which state\n"
    "the checkpoint holds (model, optimizer, RNG, step counter, LR scheduler, data order). When\n"
    "the weights differ it names what the checkpoint lacked, and a second straight run tells a\n"
    "training that is not deterministic apart from one that loses state on resume.\n"
    "\n"
    "The command is split into words as a shell would ('...', \"...\", backslashes) but nothing\n"
    "is expanded or redirected: $VAR, ~, globs, pipes and ; are refused (quote them to pass\n"
    "them as they are). After --, each argument is one word. Placeholders, replaced inside words:\n"
    "  {steps}       the step to train to: N, or K in the run to the checkpoint\n"
    "  {save_at}     K: save a checkpoint after this step (every run gets it)\n"
    "  {checkpoint}  the file to save the checkpoint to: {out}/--checkpoint-name\n"
    "  {resume}      the checkpoint to resume from; empty except in the resumed run\n"
    "  {out}         a fresh folder for this run's outputs\n"
    "  {run}         straight, checkpoint, resumed, repeat (reloaded, straight-next, resumed-next\n"
    "                when locating a divergence)\n"
    "  {{ and }}     literal braces\n"
    "The same values are in $KERNODECK_RESUME_STEPS, _SAVE_AT, _CHECKPOINT, _OUT, _RUN and\n"
    "_FROM (set only in the resumed run). The command runs in --cwd (default: here).\n"
    "Exit 1: the resumed weights differ (or two straight runs do); 3: the check could not be\n"
    "made (the command failed or timed out, wrote no checkpoint or no weights).\n"
    "\n"
    "example:\n"
    "  kernodeck resume check --steps 12 --at 5 --weights weights.pt -- /usr/bin/python3 train.py \\\n"
    "    --steps {steps} --save-at {save_at} --checkpoint {checkpoint} --resume {resume} --out {out}\n"
    "\n"
    "options";

// `resume check` with --cmd or a command after `--`: the options checked, the user's training run.
int runResumeCommand(const std::optional<std::string>& cmdText, const std::vector<std::string>& tail,
                     record::ResumeCommandOptions o, const std::string& criterion, bool json,
                     const std::string& output) {
  auto usage = [](const std::string& m) {
    std::fprintf(stderr, "kernodeck resume check: %s\n", util::printable(m, 400).c_str());
    return static_cast<int>(report::kExitUsage);
  };
  if (cmdText && !tail.empty()) return usage("give the command either with --cmd or after --, not both");
  if (o.weights.empty()) return usage("a command needs --weights NAME: the final weights file it writes in {out}");
  if (o.timeoutSeconds == 0 || o.timeoutSeconds > 7 * 24 * 3600) return usage("--timeout takes 1 to 604800 seconds");
  auto c = record::parseCriterion(criterion.empty() ? "exact" : criterion);
  if (!c.ok()) return usage(c.error().message);
  o.criterion = *c;
  if (auto st = record::validate(o); !st.ok()) return usage(st.error().message);
  auto t = cmdText ? record::CommandTemplate::parse(*cmdText, record::resumePlaceholders())
                   : record::CommandTemplate::fromWords(tail, record::resumePlaceholders());
  if (!t.ok()) return usage((cmdText ? "--cmd: " : "the command after --: ") + t.error().message);
  o.command = std::move(t).value();
  o.commandText = cmdText ? *cmdText : util::quoteCommand(tail);
  o.inspect = [](const std::string& path) { return probe::resumeInspect(path); };
  report::Report r = record::resumeCheckCommand(o);
  if (o.keep && r.subject().contains("work_folder"))
    std::fprintf(stderr, "kernodeck resume check: the work folder is kept: %s\n",
                 report::stringAt(r.subject(), "work_folder").c_str());
  return finish("resume check", r, json, output);
}

}  // namespace

int runResume(const std::vector<std::string>& argsIn) {
  if (int rc = verbOrHelp(argsIn, "resume",
                          "usage: kernodeck resume check [options] | kernodeck resume inspect CKPT\n\n"
                          "  check    train straight through and through a checkpoint and a fresh process; compare\n"
                          "           (with --cmd: your own training; 'kernodeck resume check --help')\n"
                          "  inspect  say what state a checkpoint holds and what a resume needs");
      rc >= 0)
    return rc;
  std::string verb = argsIn[0];
  if (verb == "_continue" && argsIn.size() == 5)
    return probe::resumeContinue(argsIn[1], std::atoi(argsIn[2].c_str()),
                                 static_cast<unsigned>(std::atoi(argsIn[3].c_str())), argsIn[4]);
  std::vector<std::string> args(argsIn.begin() + 1, argsIn.end()), tail;
  // Everything after `--` is the user's command, one word per argument, never an option of ours.
  bool dashDash = false;
  if (auto dd = std::find(args.begin(), args.end(), "--"); dd != args.end()) {
    dashDash = true;
    tail.assign(dd + 1, args.end());
    args.erase(dd, args.end());
  }
  if (dashDash && verb != "check") {
    std::fprintf(stderr, "kernodeck resume %s: a command after -- goes with 'resume check' only\n",
                 util::printable(verb, 60).c_str());
    return report::kExitUsage;
  }
  bool help = false, json = false;
  std::string output, ckpt, cmdText(1, '\0'), criterion;
  double atol = std::nan("");
  long long seed = LLONG_MIN;
  probe::ResumeOptions o;
  record::ResumeCommandOptions co;
  po::options_description opts(verb == "check" ? kResumeCheckUsage : "usage: kernodeck resume inspect CKPT\n\noptions");
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("json", po::bool_switch(&json), "print JSON")(
      "output,o", po::value(&output), "write the report to FILE");
  if (verb == "check")
    opts.add_options()("steps", po::value(&o.steps), "check: training steps N (default 20)")(
        "at", po::value(&o.at), "check: checkpoint after step K (default 10)")(
        "cmd", po::value(&cmdText), "check: your training command, with placeholders (above)")(
        "weights", po::value(&co.weights), "check --cmd: the final weights file the command writes in {out}")(
        "criterion", po::value(&criterion),
        "check --cmd: exact (default) | abs<=X | rel<=X | cosine>=X, on every weight tensor")(
        "checkpoint-name", po::value(&co.checkpointName),
        "check --cmd: the checkpoint file in {out} (default checkpoint.pt)")(
        "timeout", po::value(&co.timeoutSeconds), "check --cmd: seconds each run may take (default 600)")(
        "cwd", po::value(&co.cwd), "check --cmd: folder the command runs in (default: the current one)")(
        "keep", po::bool_switch(&co.keep), "check --cmd: keep the work folder (each run's outputs and log)")(
        "atol", po::value(&atol), "built-in exercise: tolerance on losses and parameters (default 0: exact)")(
        "seed", po::value(&seed), "built-in exercise: seed (default 1234)");
  if (int rc = parseOptions("resume " + verb, args, opts, {&ckpt}); rc >= 0) return rc;
  if (help) return printHelp(opts);
  if (verb == "check") {
    // A NUL cannot come from argv: cmdText still holding one means --cmd was not given.
    std::optional<std::string> givenCmd;
    if (cmdText != std::string(1, '\0')) givenCmd = cmdText;
    bool command = givenCmd || dashDash;
    if (command && (!std::isnan(atol) || seed != LLONG_MIN)) {
      std::fprintf(stderr,
                   "kernodeck resume check: --atol and --seed belong to the built-in exercise; with a command, declare "
                   "--criterion\n");
      return report::kExitUsage;
    }
    if (command) {
      co.steps = o.steps;
      co.at = o.at;
      return runResumeCommand(givenCmd, tail, co, criterion, json, output);
    }
    if (!co.weights.empty() || !criterion.empty() || !co.cwd.empty() || co.keep) {
      std::fprintf(
          stderr,
          "kernodeck resume check: --weights, --criterion, --cwd and --keep need a command (--cmd or after --)\n");
      return report::kExitUsage;
    }
    if (seed != LLONG_MIN && (seed < 0 || seed > UINT_MAX)) {
      std::fprintf(stderr, "kernodeck resume check: --seed takes 0 to %u\n", UINT_MAX);
      return report::kExitUsage;
    }
    if (!std::isnan(atol)) o.atol = atol;
    if (seed != LLONG_MIN) o.seed = static_cast<unsigned>(seed);
    o.self = selfPath();
    return finish("resume check", probe::resumeCheck(o), json, output);
  }
  if (verb == "inspect") {
    if (ckpt.empty()) {
      std::fprintf(stderr, "kernodeck resume inspect: a checkpoint file is required\n");
      return report::kExitUsage;
    }
    report::Report r = probe::resumeInspect(ckpt);
    int rc = finish("resume inspect", r, json, output);
    // A file that was read but is not a checkpoint is the wrong kind of document (exit 2, as for
    // sample check, diff and dossier build); one that could not be read, or no LibTorch to read
    // it with, is exit 3. The plugin ran when it declared its "assess" step after "read".
    struct stat st {};
    bool readable = ::stat(ckpt.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(ckpt.c_str(), R_OK) == 0;
    bool pluginRan = r.steps().size() > 1 && r.steps()[1].name == "assess";
    if (rc == report::kExitIncomplete && readable && pluginRan && r.steps()[0].status == report::StepStatus::Failed)
      return report::kExitUsage;
    return rc;
  }
  return usageVerb("resume", verb, "check or inspect");
}

}  // namespace kernodeck::cli
