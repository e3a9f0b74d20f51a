// The replay plan as people read it: each action as a command line (`describe`, printed before
// --run runs it and by `dossier replay` without --run) and the dossier's procedure.md, the
// whole plan in steps with the code, the environment and the criteria said in words.
#include <set>

#include "kernodeck/record/record.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

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

}  // namespace kernodeck::record
