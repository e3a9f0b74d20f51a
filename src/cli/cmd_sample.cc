// kernodeck sample check OUTDIR: reload the sample outputs and check them against the reference.
#include <boost/program_options.hpp>
#include <cstdio>

#include "commands.h"
#include "kernodeck/record/record.h"
#include "options.h"
#include "record_flags.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

int runSample(const std::vector<std::string>& argsIn) {
  if (int rc = verbOrHelp(argsIn, "sample",
                          "usage: kernodeck sample check OUTDIR --reference reference.json\n\n"
                          "  check   reload the outputs in OUTDIR and check them against the reference",
                          kExitCodesHelp);
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

}  // namespace kernodeck::cli
