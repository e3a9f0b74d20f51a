// `dossier replay --run`: the project replayed in a fresh folder from what the dossier
// carries. One plan (planReplay, one function per step) is printed and written into
// procedure.md (replay_procedure.cc), and executed (ProjectReplay): the code
// at the recorded revision, data and weights placed by hash, a new venv from the recorded base
// interpreter with the recorded requirements, the entry point, then the sample check of the
// new outputs against the carried expected ones.
//
// Every field the plan is made from is someone else's: paths must stay beneath the replay
// folder, the interpreter must be an absolute path to a python, the revision a commit id,
// and every program is started through util::runProcess with an argv.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "code_archive.h"
#include "dossier_layout.h"
#include "git.h"
#include "kernodeck/record/record.h"
#include "kernodeck/record/requirements_file.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "replay_image.h"
#include "replay_inventory.h"
#include "replay_seal.h"

namespace kernodeck::record {

using report::Severity;

namespace {

// PATH inside an image (its own programs; the caller's PATH names this host's).
constexpr const char* kImagePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// `python[0-9.]*` (the whole base name), scanned: the entry point is the dossier's text.
bool isPython(const std::string& program) {
  std::string base = program.substr(program.rfind('/') + 1);
  return base.starts_with("python") && std::all_of(base.begin() + 6, base.end(), [](char c) {
           return (c >= '0' && c <= '9') || c == '.';
         });
}

// The variables that change results, as the reference recorded them: only these names are
// ever taken from it.
std::map<std::string, std::string> recordedEnvironment(const Reference& ref) {
  static const std::set<std::string> names = {"CUBLAS_WORKSPACE_CONFIG", "PYTHONHASHSEED",       "OMP_NUM_THREADS",
                                              "MKL_NUM_THREADS",         "OPENBLAS_NUM_THREADS", "CUDA_LAUNCH_BLOCKING",
                                              "NVIDIA_TF32_OVERRIDE",    "CUDA_VISIBLE_DEVICES"};
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : ref.environment)
    if (names.count(k) && v.find('\0') == std::string::npos) env[k] = v;
  return env;
}

// The folder the entry point writes to: the reference's (reference init --outputs), else the
// procedure's sample check when it names a relative folder.
std::string outputsFolder(const Reference& ref, const Procedure& p) {
  if (!ref.code.outputs.empty()) return ref.code.outputs;
  for (const auto& s : p.steps)
    if (s.kind == "kernodeck" && s.argv.size() > 2 && s.argv[0] == "sample" && s.argv[1] == "check") return s.argv[2];
  return "";
}

// The dossier's pylock.toml in the environment step: each wheel placed by its hash under
// REPLAY/wheels (a changed byte stops here, naming the wheel), the lock turned into a
// requirements file with --hash lines (Debian's pip 23 does not read pylock.toml), and pip
// installing exactly those, from that folder only.
std::vector<ReplayAction> lockActions(const python::Lock& lock, const std::set<std::string>& files, const std::string& python,
                                      const ReplayPlanOptions& o) {
  std::vector<ReplayAction> out;
  std::string problem;
  for (const auto& p : lock.packages) {
    if (p.sdistOnly && !o.allowSdist)
      problem = "pylock.toml locks " + p.name + " " + p.version + " as a source distribution only: pass --allow-sdist";
    for (const auto& w : p.wheels) {
      ReplayAction a;
      a.kind = ReplayAction::Kind::Place, a.step = "environment", a.from = w.path, a.to = "wheels/" + w.name;
      a.sha256 = w.sha256, a.what = "wheel '" + util::printable(w.name, 160) + "' (pylock.toml)";
      if (!plainName(w.name) || w.path != "wheels/" + w.name)
        a.problem = a.what + " is not carried as wheels/" + util::printable(w.name, 160);
      else if (!files.count(w.path))
        a.problem = a.what + " is not carried in the dossier (" + w.path + ")";
      out.push_back(std::move(a));
    }
  }
  ReplayAction write;
  write.kind = ReplayAction::Kind::Write, write.step = "environment", write.to = "lock-requirements.txt";
  write.content = kernodeck::python::lockRequirements(lock), write.sha256 = util::sha256Hex(write.content);
  std::string root = o.root + "/";
  ReplayAction pip;
  pip.kind = ReplayAction::Kind::Command, pip.step = "environment";
  pip.argv = {python,
              "-m",
              "pip",
              "install",
              "--no-index",
              "--isolated",
              "--no-input",
              "--disable-pip-version-check",
              "--require-hashes",
              "--no-deps",
              "--find-links",
              root + "wheels",
              "-r",
              root + "lock-requirements.txt"};
  if (!o.allowSdist) pip.argv.insert(pip.argv.end() - 2, "--only-binary=:all:");
  pip.problem = problem;
  out.push_back(std::move(write));
  out.push_back(std::move(pip));
  return out;
}

using K = ReplayAction::Kind;

// An action of a kind in a step, with the fields it uses.
ReplayAction act(K kind, const char* step, std::vector<std::string> argv = {}, std::string from = {},
                 std::string to = {}) {
  ReplayAction a;
  a.kind = kind, a.step = step, a.argv = std::move(argv), a.from = std::move(from), a.to = std::move(to);
  return a;
}

// What every step of the plan is made from.
struct PlanInput {
  const Reference& ref;
  const std::set<std::string>& files;  // what the dossier carries
  const ReplayPlanOptions& o;
  std::string rooted(const std::string& rel) const { return o.root + "/" + rel; }
};

// code: the recorded revision, from the carried archive or a clone.
void codeActions(const PlanInput& in, std::vector<ReplayAction>& plan) {
  const Reference& ref = in.ref;
  const ReplayPlanOptions& o = in.o;
  if (in.files.count("code.tar")) {
    plan.push_back(act(K::Unpack, "code", {}, "code.tar", "project"));
  } else if (!ref.code.repo.empty()) {
    std::string repo = !o.repo.empty() ? o.repo : ref.code.repo;
    ReplayAction clone =
        act(K::Command, "code", {"git", "clone", "--quiet", "--no-checkout", "--", repo, in.rooted("project")});
    ReplayAction checkout = act(K::Command, "code",
                                {"git", "-c", "advice.detachedHead=false", "-C", in.rooted("project"), "checkout",
                                 "--quiet", ref.code.revision});
    if (!isCommitId(ref.code.revision))
      clone.problem = "the recorded revision '" + util::printable(ref.code.revision, 80) + "' is not a full commit id";
    else if (o.repo.empty() && repo[0] != '/')
      clone.problem = "the dossier carries no code.tar and the recorded repository '" + util::printable(repo, 200) +
                      "' is relative to where the reference was: pass --repo PATH";
    plan.push_back(clone);
    plan.push_back(checkout);
  } else {
    plan.push_back(act(K::Mkdir, "code", {}, "", "project"));  // the reference names no code
  }
}

// place: data and weights by hash, at the path the reference records (relative to the
// reference, which lies at the root of the code); the expected outputs beside the project.
void placeActions(const PlanInput& in, std::vector<ReplayAction>& plan) {
  const Reference& ref = in.ref;
  const std::set<std::string>& files = in.files;
  for (const auto* list : {&ref.data, &ref.weights}) {
    std::string kind = list == &ref.data ? "data" : "weights";
    for (const auto& input : *list) {
      ReplayAction a = act(K::Place, "place", {}, carriedInput(kind, input.name), "project/" + input.path);
      a.sha256 = input.sha256,
      a.what = kind + " '" + util::printable(input.name, 100) + "' (" + util::printable(input.path, 200) + ")";
      bool isCarried = files.count(a.from) || std::any_of(files.begin(), files.end(), [&](const std::string& f) {
                         return f.starts_with(a.from + "/");
                       });
      if (!plainName(input.name))
        a.problem = a.what + ": the name is not a plain file name";
      else if (!confinedPath(input.path))
        a.problem =
            a.what +
            " is recorded outside the project folder: a replay places inputs only at paths relative to the reference";
      else if (!isCarried)
        a.problem = a.what + " is not carried in the dossier (" + a.from + ")";
      plan.push_back(a);
    }
  }
  if (ref.result.declared) {
    ReplayAction a = act(K::Place, "place", {}, "expected", "expected");
    a.sha256 = ref.result.expectedSha256, a.what = "the expected outputs";
    if (!std::any_of(files.begin(), files.end(), [](const std::string& f) { return f.starts_with("expected/"); }))
      a.problem = "the expected outputs are not carried in the dossier (expected/)";
    plan.push_back(a);
  }
}

// The recorded requirements written out and installed with `python`, offline.
void requirementsActions(const PlanInput& in, const std::string& python, std::vector<ReplayAction>& plan) {
  const Reference& ref = in.ref;
  ReplayAction write = act(K::Write, "environment", {}, "", "requirements.txt");
  write.sha256 = ref.packages.requirementsSha256, write.content = util::join(ref.packages.requirementsLines, "\n");
  plan.push_back(write);
  std::vector<std::string> pipArgv = {
      python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "--no-input", "--isolated"};
  if (!in.o.allowSdist) pipArgv.push_back("--only-binary=:all:");  // wheels only: no setup.py runs
  pipArgv.insert(pipArgv.end(), {"-r", in.rooted("requirements.txt")});
  ReplayAction pip = act(K::Command, "environment", pipArgv);
  pip.env = {{"PIP_NO_INDEX", "1"}, {"PIP_CONFIG_FILE", "/dev/null"}};  // offline, whatever pip.conf says
  // Every line pip would read, includes too, is checked before pip reads it: --no-index does
  // not stop `-r URL`, `name @ URL`, --find-links or their abbreviations. Includes are read
  // when --run has unpacked the code; here they are checked for what their line says.
  RequirementsScanOptions scan;
  scan.allowSdist = in.o.allowSdist;
  scan.read = [](const std::string&) -> Result<std::optional<std::string>> { return std::optional<std::string>(); };
  if (auto sr = scanRequirements("requirements.txt", write.content, scan); !sr.ok())
    pip.problem =
        "the recorded requirements cannot be installed offline from what the dossier carries: " + sr.error().message;
  plan.push_back(pip);
}

// environment: a new venv from the recorded base interpreter (system site packages: Debian's
// torch lives there), the recorded requirements installed with the venv's own python, offline.
void environmentActions(const PlanInput& in, const std::string& python, std::vector<ReplayAction>& plan) {
  const Reference& ref = in.ref;
  const ReplayPlanOptions& o = in.o;
  ReplayAction venv =
      act(K::Command, "environment",
          {ref.packages.interpreter, "-m", "venv", "--system-site-packages", "--without-pip", in.rooted("venv")});
  if (ref.packages.interpreter.empty())
    venv.problem = "the reference records no base interpreter (reference init --python PATH): pass --python PATH";
  else if (ref.packages.interpreter[0] != '/' || !isPython(ref.packages.interpreter))
    venv.problem = "the recorded interpreter '" + util::printable(ref.packages.interpreter, 200) +
                   "' is not an absolute path to a python";
  else if (o.image.empty() && ::access(ref.packages.interpreter.c_str(), X_OK) != 0)
    venv.problem = "the recorded interpreter " + util::printable(ref.packages.interpreter, 200) +
                   " does not exist here: pass --python PATH (a Python " + ref.packages.interpreterVersion +
                   " with what the requirements need)";
  plan.push_back(venv);
  if (o.lock)
    for (auto& a : lockActions(*o.lock, in.files, python, o)) plan.push_back(std::move(a));
  if (!ref.packages.requirementsLines.empty()) requirementsActions(in, python, plan);
}

// run: the recorded entry point, python replaced by the environment's, in the code's folder,
// after the outputs folder is removed so that only what this run writes is checked. Returns
// why the outputs folder cannot be removed, "" when it can.
std::string runActions(const PlanInput& in, const std::string& python, const std::string& outputs,
                       std::vector<ReplayAction>& plan) {
  const Reference& ref = in.ref;
  ReplayAction remove = act(K::Remove, "run", {}, "", "project/" + outputs);
  if (outputs.empty())
    remove.problem = "the reference names no outputs folder (reference init --outputs DIR)";
  else if (!confinedPath(outputs))
    remove.problem = "the outputs folder '" + util::printable(outputs, 200) +
                     "' is not a path inside the project (relative to the reference)";
  plan.push_back(remove);
  ReplayAction entry = act(K::Command, "run");
  entry.cwd = "project", entry.env = recordedEnvironment(ref);
  for (const auto& w : util::split(ref.code.entryPoint, ' '))
    if (!w.empty()) entry.argv.push_back(w);
  if (entry.argv.empty()) {
    entry.problem = "the reference records no entry point";
    entry.argv = {"(none)"};
  } else if (isPython(entry.argv[0])) {
    entry.argv[0] = python;
  } else if (std::string prog = entry.argv[0].starts_with("./") ? entry.argv[0].substr(2) : entry.argv[0];
             entry.argv[0].find('/') != std::string::npos &&
             confinedPath(prog)) {  // ./run.sh, scripts/run: a file of the project, never PATH
    entry.argv[0] = in.rooted("project/" + prog);
  } else {
    entry.problem = "the entry point's program '" + util::printable(entry.argv[0], 200) +
                    "' is neither python nor a file of the project";
  }
  plan.push_back(entry);
  return remove.problem;
}

}  // namespace

std::vector<ReplayAction> planReplay(const Reference& ref, const Procedure& procedure,
                                     const std::vector<std::string>& carried, const ReplayPlanOptions& o) {
  std::vector<ReplayAction> plan;
  std::set<std::string> files(carried.begin(), carried.end());
  PlanInput in{ref, files, o};
  codeActions(in, plan);
  placeActions(in, plan);
  std::string python = o.python;
  if (python.empty()) {
    python = in.rooted("venv/bin/python");
    environmentActions(in, python, plan);
  }
  std::string outputs = outputsFolder(ref, procedure);
  std::string removeProblem = runActions(in, python, outputs, plan);
  // check: the new outputs against the carried expected outputs.
  ReplayAction check = act(K::Check, "check", {}, "project/" + outputs, "expected");
  if (!ref.result.declared)
    check.problem = "the reference declares no expected outputs";
  else if (removeProblem.size())
    check.problem = removeProblem;
  plan.push_back(check);
  return plan;
}

namespace {

// Copies a carried file or folder to `to` beneath `root` (no link followed there), then checks
// the placed copy against the reference's hash.
Status place(const std::string& dossier, const std::string& root, const ReplayAction& a) {
  KDK_TRY_STATUS(util::removeTree(root + "/" + a.to));
  if (Status st = copyBeneath(dossier + "/" + a.from, root, a.to); !st.ok()) return st.error().context(a.what);
  KDK_TRY_ASSIGN(HashedInput h, hashPath(root + "/" + a.to));
  if (h.sha256 != a.sha256)
    return Error::Corrupt(a.what + " does not have the " + (a.step == "environment" ? "lock's" : "reference's") +
                          " hash: sha256 " + h.sha256.substr(0, 12) + " instead of " + a.sha256.substr(0, 12) +
                          " (placed from " + a.from + ")");
  return {};
}

// The requirements file a pip action reads (its -r argument, relative to the replay folder), "" for any other.
std::string requirementsArgument(const ReplayAction& a, const std::string& work) {
  auto r = std::find(a.argv.begin(), a.argv.end(), "-r");
  if (a.step != "environment" || r == a.argv.end() || r + 1 == a.argv.end()) return "";
  return r[1].starts_with(work + "/") ? r[1].substr(work.size() + 1) : "";
}

// One `dossier replay --run`: the dossier verified and a fresh folder made, then the plan's
// actions step by step, each printed before it runs; a step stops at its first failure.
class ProjectReplay {
 public:
  explicit ProjectReplay(const ProjectReplayOptions& o) : o_(o), r_("dossier replay") {}

  report::Report run() {
    r_.declareSteps(kSteps);
    r_.subject()["reference"] = o_.dossier.shown.empty() ? o_.dossier.dir : o_.dossier.shown;
    if (!o_.image.empty()) {
      auto digest = imageDigest(o_.image);
      if (!digest.ok()) {  // the CLI refused it already; said here too for any other caller
        r_.declareSteps(kSteps);
        r_.runStep("verify", [&]() -> Status { return digest.error(); });
        return std::move(r_);
      }
      img_.image = o_.image, img_.digest = *digest, img_.gpu = o_.gpu;
      r_.subject()["image"] = o_.image;
      r_.subject()["manifest_digest"] = *digest;
    }
    r_.runStep("verify", [&] { return verify(); });
    plan();
    for (const auto& step : kSteps)
      if (step != "verify") runStep(step);
    r_.section("replay") = {{"folder", work_}, {"kept", !madeTemp_}, {"actions", done_}};
    if (madeTemp_) (void)util::removeTree(work_);
    return std::move(r_);
  }

 private:
  inline static const std::vector<std::string> kSteps = {"verify", "code", "place", "environment", "run", "check"};

  // verify: dossier verify's findings (dossier.modified, .missing, ...), as they are: then
  // nothing is replayed. Else the fresh folder is made.
  Status verify() {
    report::Report v = verifyDossier(o_.dossier.dir, o_.dossier.manifest);
    if (v.failed()) return Error::Corrupt("the dossier could not be verified: " + v.firstError());
    for (const auto& f : v.findings()) r_.add(f);
    if (!v.findings().empty()) {
      verified_ = false;
      return {};
    }
    return makeWorkFolder();
  }

  // The fresh folder: the one given (absent or empty), else a temporary one.
  Status makeWorkFolder() {
    if (!o_.work.empty()) {
      KDK_TRY_STATUS(util::checkOutputFolder(o_.work));
      struct stat st {};
      if (::lstat(o_.work.c_str(), &st) == 0 && (!S_ISDIR(st.st_mode) || !util::listFilesRecursive(o_.work).empty()))
        return Error::Invalid(o_.work + " exists and is not an empty folder: a replay starts in a fresh one");
      if (!util::makeDirs(o_.work)) return Error::Io("cannot create " + o_.work);
      std::error_code ec;
      work_ = std::filesystem::absolute(o_.work, ec).lexically_normal().string();
    } else {
      char tmpl[] = "/tmp/kernodeck-replay-XXXXXX";
      if (!::mkdtemp(tmpl)) return Error::Io("cannot create a temporary folder");
      work_ = tmpl;
      madeTemp_ = true;
    }
    // HOME and TMPDIR of every command the replay starts (sealEnvironment).
    if (!util::makeDirs(work_ + "/home") || !util::makeDirs(work_ + "/tmp"))
      return Error::Io("cannot create " + work_ + "/home and " + work_ + "/tmp");
    return {};
  }

  // The plan for the dossier as it lies, rooted in the fresh folder; and how the network is cut.
  void plan() {
    dossier_ = o_.dossier.dir;
    if (std::error_code ec; !dossier_.empty())
      dossier_ = std::filesystem::absolute(dossier_, ec).lexically_normal().string();
    std::vector<std::string> carried;
    for (const auto& e : o_.dossier.manifest) carried.push_back(e.path);
    po_ = ReplayPlanOptions{.dossier = dossier_,
                            .root = work_,
                            .python = o_.python,
                            .repo = o_.repo,
                            .allowSdist = o_.allowSdist,
                            .lock = o_.lock,
                            .image = o_.image};
    img_.dossier = dossier_, img_.work = work_;
    plan_ = planReplay(o_.reference, o_.dossier.procedure, carried, po_);
    if (!o_.image.empty())
      r_.add("replay.network", Severity::Info,
             "the environment and run steps run inside " + o_.image + " with podman --network=none (without network)" +
                 (o_.gpu ? ", every NVIDIA GPU passed through CDI" : ""),
             {{"layer", "environment"}, {"digest", img_.digest}, {"network", "none"}});
    else if (!o_.network.empty())
      r_.add("replay.network", Severity::Info, o_.network,
             {{"layer", "environment"}, {"network", o_.isolate.empty() ? "host" : "namespace"}});
  }

  // One step: its actions in order, skipped when the dossier did not verify or has none.
  void runStep(const std::string& step) {
    if (!verified_) {
      r_.skipStep(step, "the dossier does not verify: nothing is replayed");
      return;
    }
    bool any = std::any_of(plan_.begin(), plan_.end(), [&](const ReplayAction& a) { return a.step == step; });
    if (!any) {
      r_.skipStep(step, step == "environment" ? "--python " + o_.python + " given: used as it is, no venv made"
                                              : "nothing to do: the reference records none");
      return;
    }
    r_.runStep(step, [&]() -> Status {
      for (const auto& a : plan_) {
        if (a.step != step) continue;
        std::string shown = describe(a, po_);
        std::fprintf(stderr, "+ %s\n", shown.c_str());
        done_.push_back({{"step", step}, {"action", shown}});
        if (!a.problem.empty()) return Error::Invalid(a.problem);
        KDK_TRY_STATUS(execute(a));
      }
      // The rebuilt venv against what the reference declares, before the entry point runs.
      if (step == "environment" && o_.python.empty()) {
        std::string venv = work_ + "/venv", wheels = work_ + "/wheels";
        if (o_.image.empty()) return checkRebuiltEnvironment(venv, "", o_.reference, o_.lock, wheels, r_);
        KDK_TRY_ASSIGN(MountedImage mounted, MountedImage::mount(o_.image));
        return checkRebuiltEnvironment(venv, mounted.path(), o_.reference, o_.lock, wheels, r_);
      }
      return {};
    });
  }

  // One action of the plan, done.
  Status execute(const ReplayAction& a) {
    using K = ReplayAction::Kind;
    switch (a.kind) {
      case K::Mkdir:
        if (!util::makeDirs(work_ + "/" + a.to)) return Error::Io("cannot create " + work_ + "/" + a.to);
        break;
      case K::Unpack: KDK_TRY_STATUS(unpackCode(dossier_ + "/" + a.from, work_ + "/" + a.to)); break;
      case K::Place: KDK_TRY_STATUS(place(dossier_, work_, a)); break;
      case K::Write:
        KDK_TRY_STATUS(util::writeBeneath(work_, a.to, a.content));
        if (util::sha256Hex(a.content) != a.sha256)
          r_.add("replay.requirements.redacted", Severity::Warning,
                 "the recorded requirements differ from the file they were read from (a credential was redacted): "
                 "installing them as recorded",
                 {{"path", a.to}});
        break;
      case K::Remove: KDK_TRY_STATUS(util::removeTree(work_ + "/" + a.to)); break;
      case K::Command: return command(a);
      case K::Check: return check(a);
    }
    return {};
  }

  // A command, sealed (and in the image with --image); pip's requirements scanned first.
  Status command(const ReplayAction& a) {
    if (std::string req = requirementsArgument(a, work_); !req.empty()) {
      // What pip will read, includes and all, now that the code is unpacked.
      RequirementsScanOptions scan;
      scan.allowSdist = o_.allowSdist;
      scan.read = [&](const std::string& rel) { return readBeneath(work_, rel); };
      auto text = readBeneath(work_, req);
      if (!text.ok()) return Error::Io(req + ": " + text.error().message);
      if (auto sr = scanRequirements(req, **text, scan); !sr.ok())
        return Error::Unsafe("the requirements cannot be installed offline from what the dossier carries: " +
                             sr.error().message);
    }
    util::ProcessSpec spec;
    spec.argv = a.argv;
    bool sealed = a.step == "environment" || a.step == "run";
    if (!o_.isolate.empty() && sealed && o_.image.empty())
      spec.argv.insert(spec.argv.begin(), o_.isolate.begin(), o_.isolate.end());
    spec.cwd = a.cwd.empty() ? work_ : work_ + "/" + a.cwd;
    spec.env = a.env;
    const char* hostPath = std::getenv("PATH");
    std::string path = !o_.image.empty() ? std::string(kImagePath) : hostPath ? hostPath : "";
    if (a.step == "run" && o_.python.empty()) {
      // As an activated venv: a script the entry point starts finds the venv's python first.
      spec.env["VIRTUAL_ENV"] = work_ + "/venv";
      spec.env["PATH"] = work_ + "/venv/bin" + (path.empty() ? "" : ":" + path);
    }
    sealEnvironment(spec, work_);
    if (!o_.image.empty() && sealed) {
      // In the image: exactly the sealed variables; podman itself keeps the caller's
      // environment (its configuration, storage and credentials).
      if (!spec.env.count("PATH")) spec.env["PATH"] = path;
      spec.argv = podmanRun(img_, spec.cwd, spec.env, spec.argv);
      spec.env.clear(), spec.unsetEnv.clear();
    }
    spec.timeoutMs = 30u * 60 * 1000;
    spec.out = util::ProcessOutput::Stderr;
    // pip's own words are kept (and shown after), so that a failure names the package.
    bool isPip = !requirementsArgument(a, work_).empty();
    spec.err = isPip ? util::ProcessOutput::Capture : util::ProcessOutput::Stderr;
    auto pr = util::runProcess(spec);
    if (!pr.ok()) return Error::Io(util::quoteCommand(a.argv) + ": " + pr.error().message);
    if (isPip) std::fputs(pr->err.c_str(), stderr);
    if (!pr->ok())
      return Error::Invalid(util::quoteCommand(a.argv) + " " + pr->describe() +
                            (isPip && !pr->lastLine().empty() ? ": " + pr->lastLine() : ""));
    return {};
  }

  // check: the sample check of the new outputs against the carried expected ones, in-process.
  Status check(const ReplayAction& a) {
    Reference ref = o_.reference;
    ref.baseDir.clear();
    ref.result.expected = work_ + "/" + a.to;
    report::Report sample = sampleCheck(work_ + "/" + a.from, ref);
    r_.section("check") = sample.toJson();
    if (sample.failed()) return Error::Invalid("the sample check could not be made: " + sample.firstError());
    std::vector<std::string> differs, met;
    for (const auto& f : sample.findings())
      (f.severity == Severity::Error ? differs : met).push_back(f.code + ": " + f.message);
    if (!differs.empty())
      r_.add("replay.differs", Severity::Error,
             "the regenerated outputs differ from the expected ones: " + util::join(differs, "; "),
             {{"layer", "result"}});
    else
      r_.add("replay.matches", Severity::Info, "the regenerated outputs meet the reference: " + util::join(met, "; "),
             {{"layer", "result"}});
    return {};
  }

  const ProjectReplayOptions& o_;
  report::Report r_;
  ImageRun img_;
  std::string work_, dossier_;
  bool madeTemp_ = false;
  bool verified_ = true;
  ReplayPlanOptions po_;
  std::vector<ReplayAction> plan_;
  nlohmann::json done_ = nlohmann::json::array();
};

}  // namespace

report::Report replayProject(const ProjectReplayOptions& o) { return ProjectReplay(o).run(); }

}  // namespace kernodeck::record
