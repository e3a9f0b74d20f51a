// `dossier replay --run`: the project replayed in a fresh folder from what the dossier
// carries. One plan (planReplay) is printed, written into procedure.md and executed: the code
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
#include <regex>
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

bool isPython(const std::string& program) {
  static const std::regex py(R"(python[0-9.]*)");
  return std::regex_match(program.substr(program.rfind('/') + 1), py);
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
std::vector<ReplayAction> lockActions(const Lock& lock, const std::set<std::string>& files, const std::string& python,
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
  write.content = lockRequirements(lock), write.sha256 = util::sha256Hex(write.content);
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

}  // namespace

std::vector<ReplayAction> planReplay(const Reference& ref, const Procedure& procedure,
                                     const std::vector<std::string>& carried, const ReplayPlanOptions& o) {
  using K = ReplayAction::Kind;
  std::vector<ReplayAction> plan;
  std::set<std::string> files(carried.begin(), carried.end());
  auto rooted = [&](const std::string& rel) { return o.root + "/" + rel; };
  auto add = [&](ReplayAction a) { plan.push_back(std::move(a)); };
  // An action of a kind in a step, with the fields it uses.
  auto act = [](K kind, const char* step, std::vector<std::string> argv = {}, std::string from = {},
                std::string to = {}) {
    ReplayAction a;
    a.kind = kind, a.step = step, a.argv = std::move(argv), a.from = std::move(from), a.to = std::move(to);
    return a;
  };

  // code: the recorded revision, from the carried archive or a clone.
  if (files.count("code.tar")) {
    add(act(K::Unpack, "code", {}, "code.tar", "project"));
  } else if (!ref.code.repo.empty()) {
    std::string repo = !o.repo.empty() ? o.repo : ref.code.repo;
    ReplayAction clone =
        act(K::Command, "code", {"git", "clone", "--quiet", "--no-checkout", "--", repo, rooted("project")});
    ReplayAction checkout = act(
        K::Command, "code",
        {"git", "-c", "advice.detachedHead=false", "-C", rooted("project"), "checkout", "--quiet", ref.code.revision});
    if (!isCommitId(ref.code.revision))
      clone.problem = "the recorded revision '" + util::printable(ref.code.revision, 80) + "' is not a full commit id";
    else if (o.repo.empty() && repo[0] != '/')
      clone.problem = "the dossier carries no code.tar and the recorded repository '" + util::printable(repo, 200) +
                      "' is relative to where the reference was: pass --repo PATH";
    add(clone);
    add(checkout);
  } else {
    add(act(K::Mkdir, "code", {}, "", "project"));  // the reference names no code
  }

  // place: data and weights by hash, at the path the reference records (relative to the
  // reference, which lies at the root of the code); the expected outputs beside the project.
  for (const auto* list : {&ref.data, &ref.weights}) {
    std::string kind = list == &ref.data ? "data" : "weights";
    for (const auto& in : *list) {
      ReplayAction a = act(K::Place, "place", {}, carriedInput(kind, in.name), "project/" + in.path);
      a.sha256 = in.sha256,
      a.what = kind + " '" + util::printable(in.name, 100) + "' (" + util::printable(in.path, 200) + ")";
      bool isCarried = files.count(a.from) || std::any_of(files.begin(), files.end(), [&](const std::string& f) {
                         return f.starts_with(a.from + "/");
                       });
      if (!plainName(in.name))
        a.problem = a.what + ": the name is not a plain file name";
      else if (!confinedPath(in.path))
        a.problem =
            a.what +
            " is recorded outside the project folder: a replay places inputs only at paths relative to the reference";
      else if (!isCarried)
        a.problem = a.what + " is not carried in the dossier (" + a.from + ")";
      add(a);
    }
  }
  if (ref.result.declared) {
    ReplayAction a = act(K::Place, "place", {}, "expected", "expected");
    a.sha256 = ref.result.expectedSha256, a.what = "the expected outputs";
    if (!std::any_of(files.begin(), files.end(), [](const std::string& f) { return f.starts_with("expected/"); }))
      a.problem = "the expected outputs are not carried in the dossier (expected/)";
    add(a);
  }

  // environment: a new venv from the recorded base interpreter (system site packages: Debian's
  // torch lives there), the recorded requirements installed with the venv's own python, offline.
  std::string python = o.python;
  if (python.empty()) {
    python = rooted("venv/bin/python");
    ReplayAction venv =
        act(K::Command, "environment",
            {ref.packages.interpreter, "-m", "venv", "--system-site-packages", "--without-pip", rooted("venv")});
    if (ref.packages.interpreter.empty())
      venv.problem = "the reference records no base interpreter (reference init --python PATH): pass --python PATH";
    else if (ref.packages.interpreter[0] != '/' || !isPython(ref.packages.interpreter))
      venv.problem = "the recorded interpreter '" + util::printable(ref.packages.interpreter, 200) +
                     "' is not an absolute path to a python";
    else if (o.image.empty() && ::access(ref.packages.interpreter.c_str(), X_OK) != 0)
      venv.problem = "the recorded interpreter " + util::printable(ref.packages.interpreter, 200) +
                     " does not exist here: pass --python PATH (a Python " + ref.packages.interpreterVersion +
                     " with what the requirements need)";
    add(venv);
    if (o.lock)
      for (auto& a : lockActions(*o.lock, files, python, o)) add(std::move(a));
    if (!ref.packages.requirementsLines.empty()) {
      ReplayAction write = act(K::Write, "environment", {}, "", "requirements.txt");
      write.sha256 = ref.packages.requirementsSha256, write.content = util::join(ref.packages.requirementsLines, "\n");
      add(write);
      std::vector<std::string> pipArgv = {
          python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "--no-input", "--isolated"};
      if (!o.allowSdist) pipArgv.push_back("--only-binary=:all:");  // wheels only: no setup.py runs
      pipArgv.insert(pipArgv.end(), {"-r", rooted("requirements.txt")});
      ReplayAction pip = act(K::Command, "environment", pipArgv);
      pip.env = {{"PIP_NO_INDEX", "1"}, {"PIP_CONFIG_FILE", "/dev/null"}};  // offline, whatever pip.conf says
      // Every line pip would read, includes too, is checked before pip reads it: --no-index does
      // not stop `-r URL`, `name @ URL`, --find-links or their abbreviations. Includes are read
      // when --run has unpacked the code; here they are checked for what their line says.
      RequirementsScanOptions scan;
      scan.allowSdist = o.allowSdist;
      scan.read = [](const std::string&) -> Result<std::optional<std::string>> { return std::optional<std::string>(); };
      if (auto sr = scanRequirements("requirements.txt", write.content, scan); !sr.ok())
        pip.problem = "the recorded requirements cannot be installed offline from what the dossier carries: " +
                      sr.error().message;
      add(pip);
    }
  }

  // run: the recorded entry point, python replaced by the environment's, in the code's folder,
  // after the outputs folder is removed so that only what this run writes is checked.
  std::string outputs = outputsFolder(ref, procedure);
  ReplayAction remove = act(K::Remove, "run", {}, "", "project/" + outputs);
  if (outputs.empty())
    remove.problem = "the reference names no outputs folder (reference init --outputs DIR)";
  else if (!confinedPath(outputs))
    remove.problem = "the outputs folder '" + util::printable(outputs, 200) +
                     "' is not a path inside the project (relative to the reference)";
  add(remove);
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
    entry.argv[0] = rooted("project/" + prog);
  } else {
    entry.problem = "the entry point's program '" + util::printable(entry.argv[0], 200) +
                    "' is neither python nor a file of the project";
  }
  add(entry);

  // check: the new outputs against the carried expected outputs.
  ReplayAction check = act(K::Check, "check", {}, "project/" + outputs, "expected");
  if (!ref.result.declared)
    check.problem = "the reference declares no expected outputs";
  else if (remove.problem.size())
    check.problem = remove.problem;
  add(check);
  return plan;
}

std::string describe(const ReplayAction& a, const ReplayPlanOptions& o) {
  using K = ReplayAction::Kind;
  auto q = [](const std::vector<std::string>& argv) { return util::quoteCommand(argv); };
  std::string r = o.root + "/";
  switch (a.kind) {
    case K::Mkdir: return q({"mkdir", "-p", r + a.to});
    case K::Unpack:
      return q({"mkdir", "-p", r + a.to}) + " && " + q({"tar", "-xf", o.dossier + "/" + a.from, "-C", r + a.to});
    case K::Place: return q({"cp", "-r", o.dossier + "/" + a.from, r + a.to}) + "    # sha256 " + a.sha256;
    case K::Write:
      return "write " + r + a.to +
             (a.to == "lock-requirements.txt" ? " from pylock.toml" : " from the reference's requirements") +
             "    # sha256 " + a.sha256;
    case K::Remove: return q({"rm", "-rf", r + a.to});
    case K::Check:
      return q({"kernodeck", "sample", "check", r + a.from, "--reference", "reference.json"}) +
             "    # expected outputs: " + r + a.to;
    case K::Command: {
      std::string env;
      for (const auto& [k, v] : a.env) env += q({k + "=" + v}) + " ";
      std::string in = !o.image.empty() && (a.step == "environment" || a.step == "run") ? "[in " + o.image + "] " : "";
      return in + (a.cwd.empty() ? "" : "cd " + q({r + a.cwd}) + " && ") + env + q(a.argv);
    }
  }
  return "";
}

std::string procedureMarkdown(const Reference& ref, const Procedure& procedure, const std::vector<std::string>& carried,
                              const std::string& criteriaMd) {
  ReplayPlanOptions po{.dossier = ".", .root = "REPLAY", .python = "", .repo = ""};
  std::vector<ReplayAction> plan = planReplay(ref, procedure, carried, po);
  std::set<std::string> files(carried.begin(), carried.end());
  auto commands = [&](const std::string& step) {
    std::string out;
    for (const auto& a : plan)
      if (a.step == step)
        out += "    " + describe(a, po) + "\n" +
               (a.problem.empty() ? "" : "    # cannot be done as recorded: " + a.problem + "\n");
    return out.empty() ? std::string("    (nothing to do)\n") : out;
  };
  std::string code =
      ref.code.repo.empty()
          ? std::string("The reference names no repository.")
          : "Revision `" + ref.code.revision + "` of `" + ref.code.repo + "`" +
                (ref.code.dirty ? " (which had uncommitted changes)" : "") +
                (files.count("code.tar")
                     ? ", carried as `code.tar` (`git archive` of that revision): a later commit changes nothing here."
                     : "; not carried: `dossier replay --run --repo PATH` clones it.");
  std::string env = ref.packages.interpreter.empty()
                        ? std::string("No base interpreter is recorded: give one with `--python PATH`.")
                        : "A new venv from `" + ref.packages.interpreter + "` (Python " +
                              ref.packages.interpreterVersion +
                              ") with the system site packages, then the recorded requirements installed offline with "
                              "the venv's own python:";
  std::string reqs;
  for (const auto& l : ref.packages.requirementsLines)
    if (!l.empty()) reqs += "    " + l + "\n";
  std::string included;
  for (const auto& f : carried)
    if (f.starts_with("files/")) included += "- `" + f + "`\n";
  return "# Procedure\n\nReplay this dossier in a fresh folder with\n\n"
         "    kernodeck dossier verify .\n    kernodeck dossier replay . --run\n\n"
         "(`--python PATH` uses that interpreter as it is instead of a new venv; `--work DIR` keeps the replay "
         "folder.) "
         "It does the steps below, printing each command before it runs it; `REPLAY` is the fresh folder. "
         "Without `--run`, `dossier replay` prints them and runs only Kernodeck's own checks.\n\n"
         "## 1. Code\n\n" +
         code + "\n\n" + commands("code") +
         "\n## 2. Data and weights, placed by hash\n\nA file whose hash is not the reference's stops the replay here, "
         "named.\n\n" +
         commands("place") + "\n## 3. Environment\n\n" + env + "\n\n" + (reqs.empty() ? "" : reqs + "\n") +
         commands("environment") + "\n## 4. Run the entry point\n\n`" + ref.code.entryPoint + "`" +
         (ref.code.outputs.empty() ? "" : ", writing `" + ref.code.outputs + "`") + ":\n\n" + commands("run") +
         "\n## 5. Check the new outputs against the expected ones\n\n" + commands("check") +
         "\nAcceptance criteria, declared before any comparison:\n\n" + criteriaMd +
         (included.empty() ? "" : "\n## Files carried for the rebuild\n\n" + included) +
         "\n## Credentials\n\nNo credential is stored here. Provide registry credentials through `REGISTRY_AUTH_FILE`, "
         "`$XDG_RUNTIME_DIR/containers/auth.json` or `~/.docker/config.json`, and data access as each entry of "
         "`data-references.json` notes under `access`.\n";
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

}  // namespace

report::Report replayProject(const ProjectReplayOptions& o) {
  using K = ReplayAction::Kind;
  report::Report r("dossier replay");
  const std::vector<std::string> steps = {"verify", "code", "place", "environment", "run", "check"};
  r.declareSteps(steps);
  r.subject()["reference"] = o.dossier.dir;
  ImageRun img;
  if (!o.image.empty()) {
    auto digest = imageDigest(o.image);
    if (!digest.ok()) {  // the CLI refused it already; said here too for any other caller
      r.declareSteps(steps);
      r.runStep("verify", [&]() -> Status { return digest.error(); });
      return r;
    }
    img.image = o.image, img.digest = *digest, img.gpu = o.gpu;
    r.subject()["image"] = o.image;
    r.subject()["manifest_digest"] = *digest;
  }
  std::string work;
  bool madeTemp = false;
  bool verified = true;
  r.runStep("verify", [&]() -> Status {
    report::Report v = verifyDossier(o.dossier.dir, o.dossier.manifest);
    if (v.failed()) return Error::Corrupt("the dossier could not be verified: " + v.firstError());
    // dossier verify's findings (dossier.modified, .missing, ...), as they are: nothing is replayed.
    for (const auto& f : v.findings()) r.add(f);
    if (!v.findings().empty()) {
      verified = false;
      return {};
    }
    // The fresh folder: the one given (absent or empty), else a temporary one.
    if (!o.work.empty()) {
      struct stat st {};
      if (::lstat(o.work.c_str(), &st) == 0 && (!S_ISDIR(st.st_mode) || !util::listFilesRecursive(o.work).empty()))
        return Error::Invalid(o.work + " exists and is not an empty folder: a replay starts in a fresh one");
      if (!util::makeDirs(o.work)) return Error::Io("cannot create " + o.work);
      std::error_code ec;
      work = std::filesystem::absolute(o.work, ec).lexically_normal().string();
    } else {
      char tmpl[] = "/tmp/kernodeck-replay-XXXXXX";
      if (!::mkdtemp(tmpl)) return Error::Io("cannot create a temporary folder");
      work = tmpl;
      madeTemp = true;
    }
    // HOME and TMPDIR of every command the replay starts (sealEnvironment).
    if (!util::makeDirs(work + "/home") || !util::makeDirs(work + "/tmp"))
      return Error::Io("cannot create " + work + "/home and " + work + "/tmp");
    return {};
  });
  std::string dossier = o.dossier.dir;
  if (std::error_code ec; !dossier.empty())
    dossier = std::filesystem::absolute(dossier, ec).lexically_normal().string();
  std::vector<std::string> carried;
  for (const auto& e : o.dossier.manifest) carried.push_back(e.path);
  ReplayPlanOptions po{.dossier = dossier,
                       .root = work,
                       .python = o.python,
                       .repo = o.repo,
                       .allowSdist = o.allowSdist,
                       .lock = o.lock,
                       .image = o.image};
  img.dossier = dossier, img.work = work;
  std::vector<ReplayAction> plan = planReplay(o.reference, o.dossier.procedure, carried, po);
  nlohmann::json done = nlohmann::json::array();
  if (!o.image.empty())
    r.add("replay.network", Severity::Info,
          "the environment and run steps run inside " + o.image + " with podman --network=none (without network)" +
              (o.gpu ? ", every NVIDIA GPU passed through CDI" : ""),
          {{"layer", "environment"}, {"digest", img.digest}});
  else if (!o.network.empty())
    r.add("replay.network", Severity::Info, o.network, {{"layer", "environment"}});
  for (const auto& step : steps) {
    if (step == "verify") continue;
    if (!verified) {
      r.skipStep(step, "the dossier does not verify: nothing is replayed");
      continue;
    }
    bool any = std::any_of(plan.begin(), plan.end(), [&](const ReplayAction& a) { return a.step == step; });
    if (!any) {
      r.skipStep(step, step == "environment" ? "--python " + o.python + " given: used as it is, no venv made"
                                             : "nothing to do: the reference records none");
      continue;
    }
    r.runStep(step, [&]() -> Status {
      for (const auto& a : plan) {
        if (a.step != step) continue;
        std::string shown = describe(a, po);
        std::fprintf(stderr, "+ %s\n", shown.c_str());
        done.push_back({{"step", step}, {"action", shown}});
        if (!a.problem.empty()) return Error::Invalid(a.problem);
        switch (a.kind) {
          case K::Mkdir:
            if (!util::makeDirs(work + "/" + a.to)) return Error::Io("cannot create " + work + "/" + a.to);
            break;
          case K::Unpack: KDK_TRY_STATUS(unpackCode(dossier + "/" + a.from, work + "/" + a.to)); break;
          case K::Place: KDK_TRY_STATUS(place(dossier, work, a)); break;
          case K::Write:
            KDK_TRY_STATUS(util::writeBeneath(work, a.to, a.content));
            if (util::sha256Hex(a.content) != a.sha256)
              r.add("replay.requirements.redacted", Severity::Warning,
                    "the recorded requirements differ from the file they were read from (a credential was redacted): "
                    "installing them as recorded",
                    {{"path", a.to}});
            break;
          case K::Remove: KDK_TRY_STATUS(util::removeTree(work + "/" + a.to)); break;
          case K::Command: {
            if (std::string req = requirementsArgument(a, work); !req.empty()) {
              // What pip will read, includes and all, now that the code is unpacked.
              RequirementsScanOptions scan;
              scan.allowSdist = o.allowSdist;
              scan.read = [&](const std::string& rel) { return readBeneath(work, rel); };
              auto text = readBeneath(work, req);
              if (!text.ok()) return Error::Io(req + ": " + text.error().message);
              if (auto sr = scanRequirements(req, **text, scan); !sr.ok())
                return Error::Unsafe("the requirements cannot be installed offline from what the dossier carries: " +
                                     sr.error().message);
            }
            util::ProcessSpec spec;
            spec.argv = a.argv;
            bool sealed = a.step == "environment" || a.step == "run";
            if (!o.isolate.empty() && sealed && o.image.empty())
              spec.argv.insert(spec.argv.begin(), o.isolate.begin(), o.isolate.end());
            spec.cwd = a.cwd.empty() ? work : work + "/" + a.cwd;
            spec.env = a.env;
            const char* hostPath = std::getenv("PATH");
            std::string path = !o.image.empty() ? std::string(kImagePath) : hostPath ? hostPath : "";
            if (a.step == "run" && o.python.empty()) {
              // As an activated venv: a script the entry point starts finds the venv's python first.
              spec.env["VIRTUAL_ENV"] = work + "/venv";
              spec.env["PATH"] = work + "/venv/bin" + (path.empty() ? "" : ":" + path);
            }
            sealEnvironment(spec, work);
            if (!o.image.empty() && sealed) {
              // In the image: exactly the sealed variables; podman itself keeps the caller's
              // environment (its configuration, storage and credentials).
              if (!spec.env.count("PATH")) spec.env["PATH"] = path;
              spec.argv = podmanRun(img, spec.cwd, spec.env, spec.argv);
              spec.env.clear(), spec.unsetEnv.clear();
            }
            spec.timeoutMs = 30u * 60 * 1000;
            spec.out = util::ProcessOutput::Stderr;
            // pip's own words are kept (and shown after), so that a failure names the package.
            bool isPip = !requirementsArgument(a, work).empty();
            spec.err = isPip ? util::ProcessOutput::Capture : util::ProcessOutput::Stderr;
            auto pr = util::runProcess(spec);
            if (!pr.ok()) return Error::Io(util::quoteCommand(a.argv) + ": " + pr.error().message);
            if (isPip) std::fputs(pr->err.c_str(), stderr);
            if (!pr->ok())
              return Error::Invalid(util::quoteCommand(a.argv) + " " + pr->describe() +
                                    (isPip && !pr->lastLine().empty() ? ": " + pr->lastLine() : ""));
            break;
          }
          case K::Check: {
            Reference ref = o.reference;
            ref.baseDir.clear();
            ref.result.expected = work + "/" + a.to;
            report::Report sample = sampleCheck(work + "/" + a.from, ref);
            r.section("check") = sample.toJson();
            if (sample.failed()) return Error::Invalid("the sample check could not be made: " + sample.firstError());
            std::vector<std::string> differs, met;
            for (const auto& f : sample.findings())
              (f.severity == Severity::Error ? differs : met).push_back(f.code + ": " + f.message);
            if (!differs.empty())
              r.add("replay.differs", Severity::Error,
                    "the regenerated outputs differ from the expected ones: " + util::join(differs, "; "),
                    {{"layer", "result"}});
            else
              r.add("replay.matches", Severity::Info,
                    "the regenerated outputs meet the reference: " + util::join(met, "; "), {{"layer", "result"}});
            break;
          }
        }
      }
      // The rebuilt venv against what the reference declares, before the entry point runs.
      if (step == "environment" && o.python.empty()) {
        if (o.image.empty()) return checkRebuiltEnvironment(work + "/venv", "", o.reference, o.lock, r);
        KDK_TRY_ASSIGN(MountedImage mounted, MountedImage::mount(o.image));
        return checkRebuiltEnvironment(work + "/venv", mounted.path(), o.reference, o.lock, r);
      }
      return {};
    });
  }
  r.section("replay") = {{"folder", work}, {"kept", !madeTemp}, {"actions", done}};
  if (madeTemp) (void)util::removeTree(work);
  return r;
}

}  // namespace kernodeck::record
