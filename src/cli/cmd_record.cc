// kernodeck reference init|show|verify, sample check, dossier build|verify|replay, diff, resume check|inspect.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <climits>
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "kernodeck/probe/resume.h"
#include "kernodeck/record/record.h"
#include "kernodeck/util/safe_file.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

namespace {

std::string selfPath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "kernodeck";
}

// Parses options for "kernodeck NAME VERB"; returns -1 to continue, else an exit code.
int parse(const std::string& name, po::options_description& opts, const po::positional_options_description& pos,
          const std::vector<std::string>& args, bool& help) {
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "kernodeck %s: %s\n", name.c_str(), e.what());
    return report::kExitUsage;
  }
  if (help) {
    std::cout << opts;
    return 0;
  }
  return -1;
}

int finish(const std::string& name, const report::Report& r, bool json, const std::string& output, const std::string& failOn = "error") {
  auto t = report::parseFailOn(failOn);
  if (!t.ok()) {
    std::fprintf(stderr, "kernodeck %s: %s\n", name.c_str(), t.error().message.c_str());
    return report::kExitUsage;
  }
  if (int rc = emit(json ? r.toJson().dump(2) + "\n" : r.toText(), output)) return rc;
  if (r.failed()) std::fprintf(stderr, "kernodeck %s: %s\n", name.c_str(), r.firstError().c_str());
  return r.exitCode(*t);
}

Result<nlohmann::json> loadJson(const std::string& path) {
  KDK_TRY_ASSIGN(std::string text, util::readFileLimited(path, 64u << 20));
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error::Invalid(path + " is not valid JSON");
  return j;
}

int usageVerb(const char* cmd, const std::string& verb, const char* verbs) {
  std::fprintf(stderr, "kernodeck %s: unknown action '%s' (use %s)\n", cmd, verb.c_str(), verbs);
  return report::kExitUsage;
}

}  // namespace

int runReference(const std::vector<std::string>& argsIn) {
  if (argsIn.empty()) return usageVerb("reference", "", "init, show or verify");
  std::string verb = argsIn[0];
  std::vector<std::string> args(argsIn.begin() + 1, argsIn.end());
  bool help = false, json = false;
  std::string output, reference = "reference.json";
  po::options_description opts("usage: kernodeck reference init|show|verify [options]\n\noptions");
  po::positional_options_description pos;
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("json", po::bool_switch(&json), "print JSON")(
      "output,o", po::value(&output), "write to FILE (init: the reference, default reference.json)")(
      "reference", po::value(&reference), "the reference file (show, verify)");
  if (verb == "init") {
    record::ReferenceOptions ro;
    std::vector<std::string> data, weights, params;
    opts.add_options()("repo", po::value(&ro.repo), "git repository of the code")("entry-point", po::value(&ro.entryPoint), "the command or script that produces the outputs")(
        "config", po::value(&ro.configs)->composing(), "configuration file (hashed; repeatable)")(
        "param", po::value(&params)->composing(), "parameter KEY=VALUE (repeatable)")("preprocessing", po::value(&ro.preprocessing), "preprocessing, in words")(
        "data", po::value(&data)->composing(), "NAME=PATH[,provenance=SRC][,access=HOW] (repeatable)")(
        "weights", po::value(&weights)->composing(), "NAME=PATH[,provenance=SRC][,access=HOW] (repeatable)")(
        "packages-from", po::value(&ro.packagesReport), "a kernodeck audit --json report (image or dir:/)")(
        "requirements", po::value(&ro.requirements), "or a requirements file")("host-record", po::value(&ro.hostRecord), "kernodeck.host/v1 record (default: read the host)")(
        "host-root", po::value(&ro.hostRoot), "host root to read (default /)")("expected", po::value(&ro.expected), "folder of expected outputs")(
        "ids", po::value(&ro.ids), "file name of the sample ids inside the output folders")(
        "criterion", po::value(&ro.criterion), "exact | abs<=X | rel<=X | cosine>=X | topk:K>=X, declared now")(
        "why", po::value(&ro.why), "why this criterion and threshold (kept in the record)");
    if (int rc = parse("reference init", opts, pos, args, help); rc >= 0) return rc;
    for (const auto& p : params) {
      size_t eq = p.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "kernodeck reference init: --param takes KEY=VALUE\n");
        return report::kExitUsage;
      }
      ro.params[p.substr(0, eq)] = p.substr(eq + 1);
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
    report::Report r("reference init");
    r.declareSteps({"record"});
    nlohmann::json ref;
    r.runStep("record", [&]() -> Status {
      KDK_TRY_ASSIGN(ref, record::buildReference(ro, r));
      return {};
    });
    if (r.failed()) return finish("reference init", r, json, "");
    if (int rc = emit(ref.dump(2) + "\n", output.empty() ? "reference.json" : output)) return rc;
    return finish("reference init", r, json, "", "none");
  }
  if (verb == "show") {
    if (int rc = parse("reference show", opts, pos, args, help); rc >= 0) return rc;
    auto j = loadJson(reference);
    if (!j.ok()) {
      std::fprintf(stderr, "kernodeck reference show: %s\n", j.error().message.c_str());
      return report::kExitIncomplete;
    }
    return emit(j->dump(2) + "\n", output);
  }
  if (verb == "verify") {
    if (int rc = parse("reference verify", opts, pos, args, help); rc >= 0) return rc;
    auto j = loadJson(reference);
    if (!j.ok()) {
      std::fprintf(stderr, "kernodeck reference verify: %s\n", j.error().message.c_str());
      return report::kExitIncomplete;
    }
    return finish("reference verify", record::verifyReference(*j), json, output);
  }
  return usageVerb("reference", verb, "init, show or verify");
}

int runSample(const std::vector<std::string>& argsIn) {
  if (argsIn.empty() || argsIn[0] != "check") return usageVerb("sample", argsIn.empty() ? "" : argsIn[0], "check");
  std::vector<std::string> args(argsIn.begin() + 1, argsIn.end());
  bool help = false, json = false;
  std::string output, reference = "reference.json", outDir;
  po::options_description opts("usage: kernodeck sample check OUTDIR --reference reference.json\n\noptions");
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("json", po::bool_switch(&json), "print JSON")(
      "output,o", po::value(&output), "write the report to FILE")("reference", po::value(&reference), "the reference (default reference.json)");
  po::options_description all;
  all.add(opts).add_options()("outdir", po::value(&outDir));
  po::positional_options_description pos;
  pos.add("outdir", 1);
  if (int rc = parse("sample check", all, pos, args, help); rc >= 0) return rc;
  if (outDir.empty()) {
    std::fprintf(stderr, "kernodeck sample check: an output folder is required\n");
    return report::kExitUsage;
  }
  auto j = loadJson(reference);
  if (!j.ok()) {
    std::fprintf(stderr, "kernodeck sample check: %s\n", j.error().message.c_str());
    return report::kExitIncomplete;
  }
  return finish("sample check", record::sampleCheck(outDir, *j), json, output);
}

int runDossier(const std::vector<std::string>& argsIn) {
  if (argsIn.empty()) return usageVerb("dossier", "", "build, verify or replay");
  std::string verb = argsIn[0];
  std::vector<std::string> args(argsIn.begin() + 1, argsIn.end());
  bool help = false, json = false;
  record::DossierOptions o;
  std::string output;
  o.reference = "reference.json";
  po::options_description opts("usage: kernodeck dossier build|verify|replay DIR [options]\n\noptions");
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("json", po::bool_switch(&json), "print JSON")(
      "output,o", po::value(&output), "write the report to FILE")("reference", po::value(&o.reference), "build: the reference (default reference.json)")(
      "report", po::value(&o.reports)->composing(), "build: a check report to include (repeatable)")(
      "outputs", po::value(&o.outputs), "build: the sample folder the procedure checks");
  po::options_description all;
  all.add(opts).add_options()("dir", po::value(&o.dir));
  po::positional_options_description pos;
  pos.add("dir", 1);
  if (int rc = parse("dossier " + verb, all, pos, args, help); rc >= 0) return rc;
  if (o.dir.empty()) {
    std::fprintf(stderr, "kernodeck dossier %s: a folder is required\n", verb.c_str());
    return report::kExitUsage;
  }
  o.self = selfPath();
  if (verb == "build") return finish("dossier build", record::buildDossier(o), json, output);
  if (verb == "verify") return finish("dossier verify", record::verifyDossier(o.dir), json, output);
  if (verb == "replay") return finish("dossier replay", record::replayDossier(o.dir, o.self), json, output);
  return usageVerb("dossier", verb, "build, verify or replay");
}

int runDiff(const std::vector<std::string>& args) {
  bool help = false, json = false;
  std::string output, a, b;
  po::options_description opts("usage: kernodeck diff A.json B.json (references, audit reports or inventories)\n\noptions");
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("json", po::bool_switch(&json), "print JSON")(
      "output,o", po::value(&output), "write the report to FILE");
  po::options_description all;
  all.add(opts).add_options()("a", po::value(&a))("b", po::value(&b));
  po::positional_options_description pos;
  pos.add("a", 1).add("b", 1);
  if (int rc = parse("diff", all, pos, args, help); rc >= 0) return rc;
  if (b.empty()) {
    std::fprintf(stderr, "kernodeck diff: two files are required\n");
    return report::kExitUsage;
  }
  auto ja = loadJson(a), jb = loadJson(b);
  if (!ja.ok() || !jb.ok()) {
    std::fprintf(stderr, "kernodeck diff: %s\n", (!ja.ok() ? ja.error() : jb.error()).message.c_str());
    return report::kExitIncomplete;
  }
  return finish("diff", record::diffRecords(*ja, *jb), json, output, "warning");
}

int runResume(const std::vector<std::string>& argsIn) {
  if (argsIn.empty()) return usageVerb("resume", "", "check or inspect");
  std::string verb = argsIn[0];
  if (verb == "_continue" && argsIn.size() == 5)
    return probe::resumeContinue(argsIn[1], std::atoi(argsIn[2].c_str()), static_cast<unsigned>(std::atoi(argsIn[3].c_str())), argsIn[4]);
  std::vector<std::string> args(argsIn.begin() + 1, argsIn.end());
  bool help = false, json = false;
  std::string output, ckpt;
  probe::ResumeOptions o;
  po::options_description opts("usage: kernodeck resume check [options] | kernodeck resume inspect CKPT\n\noptions");
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("json", po::bool_switch(&json), "print JSON")(
      "output,o", po::value(&output), "write the report to FILE")("steps", po::value(&o.steps), "check: training steps (default 20)")(
      "at", po::value(&o.at), "check: checkpoint after this many steps (default 10)")(
      "atol", po::value(&o.atol), "check: tolerance on losses and parameters, declared before the run (default 0: exact)")(
      "seed", po::value(&o.seed), "check: seed (default 1234)");
  po::options_description all;
  all.add(opts).add_options()("checkpoint", po::value(&ckpt));
  po::positional_options_description pos;
  pos.add("checkpoint", 1);
  if (int rc = parse("resume " + verb, all, pos, args, help); rc >= 0) return rc;
  if (verb == "check") {
    o.self = selfPath();
    return finish("resume check", probe::resumeCheck(o), json, output);
  }
  if (verb == "inspect") {
    if (ckpt.empty()) {
      std::fprintf(stderr, "kernodeck resume inspect: a checkpoint file is required\n");
      return report::kExitUsage;
    }
    return finish("resume inspect", probe::resumeInspect(ckpt), json, output);
  }
  return usageVerb("resume", verb, "check or inspect");
}

}  // namespace kernodeck::cli
