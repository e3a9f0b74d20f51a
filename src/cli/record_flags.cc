// The helpers of the record commands: see record_flags.h.
#include "record_flags.h"

#include <unistd.h>

#include <climits>
#include <cstdio>

#include "commands.h"
#include "kernodeck/util/self_path.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::cli {

std::string selfPath() {
  std::string self = util::executablePath();
  return self.empty() ? "kernodeck" : self;
}

int finish(const std::string& name, const report::Report& r, bool json, const std::string& output,
           const std::string& failOn) {
  auto t = report::parseFailOn(failOn);
  if (!t.ok()) {
    std::fprintf(stderr, "kernodeck %s: %s\n", name.c_str(), t.error().message.c_str());
    return report::kExitUsage;
  }
  if (int rc = emit(json ? r.toJson().dump(2) + "\n" : r.toText(), output)) return rc;
  if (r.failed()) std::fprintf(stderr, "kernodeck %s: %s\n", name.c_str(), r.firstError().c_str());
  return r.exitCode(*t);
}

int documentExit(const Error& e) { return report::exitCodeOf(e); }

int documentError(const std::string& cmd, const Error& e) {
  std::fprintf(stderr, "kernodeck %s: %s\n", cmd.c_str(), util::printable(e.message, 400).c_str());
  return documentExit(e);
}

Result<record::Reference> loadReference(const std::string& path) {
  KDK_TRY_ASSIGN(record::Reference ref, loadDocument<record::Reference>(
                                            path, [](const nlohmann::json& j) { return record::parseReference(j); }));
  ref.baseDir = std::filesystem::path(path).parent_path().string();
  return ref;
}

int usageVerb(const char* cmd, const std::string& verb, const char* verbs) {
  std::fprintf(stderr, "kernodeck %s: unknown action '%s' (use %s)\n", cmd, util::printable(verb, 60).c_str(), verbs);
  return report::kExitUsage;
}

int verbOrHelp(const std::vector<std::string>& args, const char* cmd, const char* usage, const char* exitCodes) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    std::printf("%s\n\nRun 'kernodeck %s ACTION --help' for an action's options.\n\n%s", usage, cmd,
                exitCodes ? exitCodes : kExitCodesWithoutFailOn);
    return 0;
  }
  if (args.empty()) {
    std::fprintf(stderr, "kernodeck %s: an action is required\n%s\n", cmd, usage);
    return report::kExitUsage;
  }
  return -1;
}

}  // namespace kernodeck::cli
