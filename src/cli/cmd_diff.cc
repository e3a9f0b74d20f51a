// kernodeck diff A.json B.json: two audit reports, references, inventories or any pair of them,
// each parsed by the record module's typed readers and compared by record::diffRecords, so that
// packages are compared the same way whatever the documents are.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <optional>

#include "commands.h"
#include "kernodeck/record/record.h"
#include "kernodeck/report/formats.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/safe_file.h"
#include "options.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

int runDiffReports(const std::vector<std::string>& args) {
  bool help = false, json = false;
  std::string output, a, b, format, failOn = "warning";
  po::options_description opts(
      "usage: kernodeck diff A.json B.json\n\n"
      "A and B: two audit reports (kernodeck audit --json), two references or inventories\n\noptions");
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("format", po::value(&format),
                                                                         "text (default), json, html or markdown (a review of an image bump for a PR comment)")(
      "json", po::bool_switch(&json), "the same as --format json")("output,o", po::value(&output),
                                                                   "write the report to FILE")(
      "fail-on", po::value(&failOn), "exit 1 on differences at or above: info, warning (default), error, none");
  std::vector<std::string> files;
  if (int rc = parseOptions("diff", args, opts, &files); rc >= 0) return rc;
  if (help) return printHelp(opts);
  if (files.size() != 2) return usageError("diff", "two files are required (try --help)");
  a = files[0];
  b = files[1];
  auto threshold = report::parseFailOn(failOn);
  auto fmt = report::parseFormatOptions(format, json);
  if (fmt.ok() && *fmt != report::Format::Text && *fmt != report::Format::Json && *fmt != report::Format::Html &&
      *fmt != report::Format::Markdown)
    fmt = Error::Invalid("--format takes text, json, html or markdown for a diff");
  if (!threshold.ok() || !fmt.ok())
    return usageError("diff", (!threshold.ok() ? threshold.error() : fmt.error()).message);
  nlohmann::json docs[2];
  for (int i = 0; i < 2; ++i) {
    const std::string& path = i ? b : a;
    auto text = util::readFileLimited(path, 256u << 20);
    if (!text.ok()) {
      std::fprintf(stderr, "kernodeck diff: %s\n", text.error().message.c_str());
      return report::kExitIncomplete;
    }
    if (auto deep = util::checkJsonNesting(*text, path); !deep.ok()) {
      std::fprintf(stderr, "kernodeck diff: %s\n", deep.error().message.c_str());
      return report::kExitUsage;
    }
    docs[i] = util::parseUntrustedJson(*text);
    if (!docs[i].is_object()) {
      std::fprintf(stderr, "kernodeck diff: %s is not a JSON object (an audit report, reference or inventory)\n",
                   path.c_str());
      return report::kExitUsage;
    }
  }
  record::DiffInput in[2];
  for (int i = 0; i < 2; ++i) {
    auto d = record::parseDiffInput(docs[i]);
    if (!d.ok()) {
      std::fprintf(stderr, "kernodeck diff: %s: %s\n", (i ? b : a).c_str(), d.error().message.c_str());
      return report::kExitUsage;
    }
    in[i] = std::move(d).value();
  }
  std::optional<report::Report> r = record::diffRecords(in[0], in[1]);
  r->subject()["reference"] = a + " -> " + b;
  if (int rc = emit(report::render(*r, *fmt, *threshold), output)) return rc;
  if (r->failed()) std::fprintf(stderr, "kernodeck diff: %s\n", r->firstError().c_str());
  return r->exitCode(*threshold);
}

}  // namespace kernodeck::cli
