// kernodeck fleet plan|run|summary: audit every image of a registry with a Kubernetes Indexed
// Job (one `fleet run` per shard), the registry being the shared store (layer results in the
// cache repository, reports attached to the images). See src/fleet/ and container/k8s/fleet/.
#include <boost/program_options.hpp>
#include <cstdio>
#include <cstdlib>

#include "commands.h"
#include "kernodeck/audit/exceptions_file.h"
#include "kernodeck/fleet/plan.h"
#include "kernodeck/fleet/run.h"
#include "kernodeck/fleet/summary.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/scan_store.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/util/time.h"
#include "options.h"
#include "registry_flags.h"

namespace po = boost::program_options;
using nlohmann::json;

namespace kernodeck::cli {

namespace {

Result<fleet::Plan> loadPlan(const std::string& path) {
  if (path.empty()) return Error::Invalid("--plan FILE is required");
  KDK_TRY_ASSIGN(std::string text, util::readFileLimited(path, 256u << 20));
  auto p = fleet::parsePlan(text);
  if (!p.ok()) return Error::Invalid(path + ": " + p.error().message);
  return p;
}

int runPlan(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: kernodeck fleet plan (FILE | --catalog REGISTRY[/PREFIX]) --cache-repo REGISTRY/REPO [options]\n\n"
      "FILE: image references, one per line ('#' comments)\n\noptions");
  std::string catalog, cacheRepo, output, platform;
  int shards = 1;
  bool help = false;
  RegistryFlags rf;
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")(
      "catalog", po::value(&catalog),
      "every tag of every repository of REGISTRY (under PREFIX), from _catalog and tags/list")(
      "shards", po::value(&shards), "number of workers (the Indexed Job's completions; default 1)")(
      "cache-repo", po::value(&cacheRepo), "REGISTRY/REPO where the workers share layer results (required)")(
      "platform", po::value(&platform), "OS/ARCH[/VARIANT] picked from multi-platform images (default: this host's)")(
      "output,o", po::value(&output), "write the plan to FILE instead of stdout");
  rf.add(opts, false, /*defaultTimeoutS=*/1800);
  std::vector<std::string> files;
  if (int rc = parseOptions("fleet plan", args, opts, &files); rc >= 0) return rc;
  if (help) return printHelp(opts, "exit codes: 0 ok, 2 usage, 3 a reference could not be resolved\n");
  if (files.size() + (catalog.empty() ? 0 : 1) != 1)
    return usageError("fleet plan", "give either one FILE of references or --catalog (try --help)");
  if (shards < 1 || shards > 10000) return usageError("fleet plan", "--shards takes 1 to 10000");
  if (cacheRepo.empty())
    return usageError("fleet plan", "--cache-repo REGISTRY/REPO is required: it is where workers share layer results");
  if (std::string e = rf.finish(); !e.empty()) return usageError("fleet plan", e);
  if (auto s = registry::openRegistryScanStore(cacheRepo, rf.options); !s.ok())
    return usageError("fleet plan", s.error().message);
  oci::Platform want = oci::hostPlatform();
  if (!platform.empty()) {
    auto p = oci::parsePlatform(platform);
    if (!p.ok()) return usageError("fleet plan", p.error().message);
    want = *p;
  }
  auto refs = catalog.empty() ? fleet::readRefList(files[0]) : fleet::catalogRefs(catalog, cacheRepo, rf.options);
  if (!refs.ok()) {
    std::fprintf(stderr, "kernodeck fleet plan: %s\n", refs.error().message.c_str());
    return report::kExitIncomplete;
  }
  if (refs->empty()) return usageError("fleet plan", "no image references to plan");
  auto plan = fleet::makePlan(*refs, shards, cacheRepo, want, rf.options);
  if (!plan.ok()) {
    std::fprintf(stderr, "kernodeck fleet plan: %s\n", plan.error().message.c_str());
    return report::kExitIncomplete;
  }
  std::fprintf(stderr, "kernodeck fleet plan: %zu images, %zu unique layers, %d shards\n", plan->images.size(),
               plan->layers.size(), shards);
  return emit(plan->toJson().dump(2) + "\n", output);
}

int runWorker(const std::vector<std::string>& args) {
  po::options_description opts("usage: kernodeck fleet run --plan FILE [--shard I] [options]\n\noptions");
  std::string planFile, signKey, output, reaudit;
  std::vector<std::string> cacheKeys;
  int shard = -1;
  double wait = 600;
  bool help = false, redo = false;
  RegistryFlags rf;
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("plan", po::value(&planFile),
                                                                         "the plan written by 'fleet plan'")(
      "shard", po::value(&shard), "this worker's shard (default: $JOB_COMPLETION_INDEX)")(
      "sign-key", po::value(&signKey),
      "sign the layer results it shares and the reports it attaches with this PEM key (ECDSA P-256 or Ed25519; "
      "required); shared results signed by it are trusted")(
      "cache-key", po::value(&cacheKeys)->composing(),
      "also trust shared layer results signed by this PEM key (repeatable)")(
      "wait", po::value(&wait), "seconds to wait for layers other shards own before walking them here (default 600)")(
      "redo", po::bool_switch(&redo), "audit again images that already have a good report")(
      "reaudit-older-than", po::value(&reaudit),
      "audit again images whose newest verified report was signed longer ago than this (e.g. 7d; keep it below "
      "the gate's --max-age)")("output,o", po::value(&output),
                               "write the worker's JSON outcome to FILE instead of stdout");
  std::vector<std::string> exceptionFiles;  // --exceptions, as in audit
  opts.add_options()("exceptions", po::value(&exceptionFiles)->composing(),
                     "waive the findings this kernodeck.exceptions/v1 file lists in every report (repeatable)");
  rf.add(opts, false, /*defaultTimeoutS=*/6 * 3600);
  if (int rc = parseOptions("fleet run", args, opts); rc >= 0) return rc;
  if (help)
    return printHelp(opts, "exit codes: 0 ok, 2 usage, 3 some layer or image could not be done (run it again)\n");
  if (shard < 0) {
    const char* idx = std::getenv("JOB_COMPLETION_INDEX");
    auto v = idx ? util::parseUint(idx) : std::nullopt;
    if (!v) return usageError("fleet run", "--shard I is required when $JOB_COMPLETION_INDEX is not set");
    shard = static_cast<int>(*v);
  }
  if (!(wait >= 0)) return usageError("fleet run", "--wait takes seconds >= 0");
  std::optional<int64_t> reauditS;
  if (!reaudit.empty() && !(reauditS = util::parseDurationSeconds(reaudit)))
    return usageError("fleet run", "--reaudit-older-than needs a duration such as 7d, 12h or 1w, not '" +
                                       util::printable(reaudit, 60) + "'");
  if (std::string e = rf.finish(); !e.empty()) return usageError("fleet run", e);
  auto plan = loadPlan(planFile);
  if (!plan.ok()) return usageError("fleet run", plan.error().message);
  if (shard >= plan->shards)
    return usageError(
        "fleet run", "shard " + std::to_string(shard) + " is not in the plan's 0.." + std::to_string(plan->shards - 1));
  // Workers share layer results only signed (an unsigned one counts for no reader): no key, no fleet.
  if (signKey.empty())
    return usageError("fleet run",
                      "--sign-key KEY is required: the layer results it shares and its reports are signed");
  std::optional<attest::Key> key;
  auto k = attest::Key::fromFile(signKey);
  if (!k.ok() || !k->isPrivate())
    return usageError("fleet run",
                      "--sign-key: " + (k.ok() ? std::string("a private key is needed to sign") : k.error().message));
  key = std::move(*k);
  std::vector<attest::Key> trusted;
  for (const auto& f : cacheKeys) {
    auto c = attest::Key::fromFile(f);
    if (!c.ok()) return usageError("fleet run", "--cache-key: " + c.error().message);
    trusted.push_back(std::move(*c));
  }
  fleet::RunOptions ro{shard, rf.options, &*key, wait, redo, {}};
  ro.reauditOlderThanS = reauditS;
  for (const auto& c : trusted) ro.cacheKeys.push_back(&c);
  for (const auto& file : exceptionFiles) {
    auto ex = audit::loadExceptionsFile(file, report::todayUtc());
    if (!ex.ok()) return usageError("fleet run", "--exceptions: " + ex.error().message);
    ro.exceptions.push_back(std::move(*ex));
  }
  fleet::RunOutcome out = fleet::runShard(*plan, ro);
  json j = out.toJson();
  j["shard"] = shard;
  if (int rc = emit(j.dump(2) + "\n", output)) return rc;
  return out.complete() ? report::kExitOk : report::kExitIncomplete;
}

int runSummary(const std::vector<std::string>& args) {
  po::options_description opts("usage: kernodeck fleet summary --plan FILE [options]\n\noptions");
  std::string planFile, keyFile, output, html, failOn = "error";
  bool help = false, asJson = false;
  RegistryFlags rf;
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("plan", po::value(&planFile),
                                                                         "the plan written by 'fleet plan'")(
      "key", po::value(&keyFile), "count only reports whose signature verifies with this PEM key")(
      "json", po::bool_switch(&asJson), "print kernodeck.fleet-summary/v1 JSON instead of text")(
      "html", po::value(&html), "also write an HTML page to FILE")(
      "fail-on", po::value(&failOn), "an image fails on findings at or above: info, warning, error (default), none")(
      "output,o", po::value(&output), "write the summary to FILE instead of stdout");
  rf.add(opts, false, /*defaultTimeoutS=*/1800);
  if (int rc = parseOptions("fleet summary", args, opts); rc >= 0) return rc;
  if (help)
    return printHelp(
        opts,
        "exit codes: 0 every image passes, 1 some image fails, 2 usage, 3 some report is missing or incomplete\n");
  auto threshold = report::parseFailOn(failOn);
  if (!threshold.ok()) return usageError("fleet summary", threshold.error().message);
  if (std::string e = rf.finish(); !e.empty()) return usageError("fleet summary", e);
  auto plan = loadPlan(planFile);
  if (!plan.ok()) return usageError("fleet summary", plan.error().message);
  std::optional<attest::Key> key;
  if (!keyFile.empty()) {
    auto k = attest::loadVerifyKey(keyFile, "--key");
    if (!k.ok()) return usageError("fleet summary", k.error().message);
    key = std::move(*k);
  }
  json s = fleet::gatherSummary(*plan, rf.options, key ? &*key : nullptr, *threshold);
  if (!html.empty())
    if (int rc = emit(fleet::summaryHtml(s), html)) return rc;
  if (int rc = emit(asJson ? s.dump(2) + "\n" : fleet::summaryText(s), output)) return rc;
  return fleet::summaryExitCode(s);
}

}  // namespace

int runFleet(const std::vector<std::string>& args) {
  static const struct {
    const char* name;
    int (*fn)(const std::vector<std::string>&);
    const char* summary;
  } subs[] = {
      {"plan", runPlan, "resolve images, dedupe manifests and layers, and split the work into shards"},
      {"run", runWorker, "one worker: walk its layers, share the results, audit its images and attach the reports"},
      {"summary", runSummary, "gather the attached reports of a plan's images into one table (text, JSON, HTML)"}};
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::FILE* f = args.empty() ? stderr : stdout;
    std::fprintf(f, "usage: kernodeck fleet SUBCOMMAND [ARGS...]\n\n");
    for (const auto& s : subs) std::fprintf(f, "  %-8s %s\n", s.name, s.summary);
    return args.empty() ? report::kExitUsage : 0;
  }
  returnLargeFreesToTheKernel();
  for (const auto& s : subs)
    if (args[0] == s.name) return s.fn(std::vector<std::string>(args.begin() + 1, args.end()));
  std::fprintf(stderr, "kernodeck fleet: unknown subcommand '%s' (plan, run, summary)\n",
               util::printable(args[0], 60).c_str());
  return report::kExitUsage;
}

}  // namespace kernodeck::cli
