// kernodeck reference init|show|verify: declare the reference before any comparison, print it, re-hash it.
#include <sys/stat.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "commands.h"
#include "kernodeck/record/record.h"
#include "kernodeck/util/strings.h"
#include "options.h"
#include "record_flags.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

namespace {

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

// The repeatable KEY=VALUE and NAME=PATH options of `reference init`, as given.
struct InitLists {
  std::vector<std::string> data, weights, params, seeds, determinism;
};

// Declares the options of `reference init` into `opts`, filling `ro` and `in`.
void addInitOptions(po::options_description& opts, record::ReferenceOptions& ro, InitLists& in) {
  opts.add_options()("repo", po::value(&ro.repo), "git repository of the code")(
      "entry-point", po::value(&ro.entryPoint), "the command or script that produces the outputs")(
      "outputs", po::value(&ro.outputs), "the folder the entry point writes its outputs to")(
      "config", po::value(&ro.configs)->composing(), "configuration file (hashed; repeatable)")(
      "param", po::value(&in.params)->composing(), "parameter KEY=VALUE (repeatable)")(
      "preprocessing", po::value(&ro.preprocessing), "preprocessing, in words")(
      "data", po::value(&in.data)->composing(), "NAME=PATH[,provenance=SRC][,access=HOW] (repeatable)")(
      "weights", po::value(&in.weights)->composing(), "NAME=PATH[,provenance=SRC][,access=HOW] (repeatable)")(
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
      "seed", po::value(&in.seeds)->composing(), "a seed the project sets, NAME=VALUE (repeatable)")(
      "determinism", po::value(&in.determinism)->composing(),
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
}

// Reads the repeatable options into `ro`; -1 to go on, else the usage exit code (after one line).
int readInitLists(const InitLists& in, record::ReferenceOptions& ro) {
  for (const auto& p : in.params) {
    size_t eq = p.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "kernodeck reference init: --param takes KEY=VALUE\n");
      return report::kExitUsage;
    }
    ro.params[p.substr(0, eq)] = p.substr(eq + 1);
  }
  for (auto* list : {&in.seeds, &in.determinism})
    for (const auto& p : *list) {
      size_t eq = p.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "kernodeck reference init: --%s takes NAME=VALUE\n",
                     list == &in.seeds ? "seed" : "determinism");
        return report::kExitUsage;
      }
      (list == &in.seeds ? ro.seeds : ro.determinism)[p.substr(0, eq)] = p.substr(eq + 1);
    }
  for (auto* list : {&in.data, &in.weights})
    for (const auto& d : *list) {
      auto named = record::parseNamedInput(d);
      if (!named.ok()) {
        std::fprintf(stderr, "kernodeck reference init: %s\n", named.error().message.c_str());
        return report::kExitUsage;
      }
      (list == &in.data ? ro.data : ro.weights).push_back(*named);
    }
  return -1;
}

// `reference init` with its options read: checks the declaration, builds the reference and
// writes it to `output` (default reference.json).
int runInit(record::ReferenceOptions& ro, const std::string& output, bool json) {
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
    InitLists in;
    addInitOptions(opts, ro, in);
    if (int rc = parseOptions("reference init", args, opts); rc >= 0) return rc;
    if (help) return printHelp(opts);
    ro.referenceDir = std::filesystem::path(output.empty() ? "reference.json" : output).parent_path().string();
    if (ro.referenceDir.empty()) ro.referenceDir = ".";
    if (int rc = readInitLists(in, ro); rc >= 0) return rc;
    return runInit(ro, output, json);
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

}  // namespace kernodeck::cli
