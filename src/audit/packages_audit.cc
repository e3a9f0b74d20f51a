#include "kernodeck/audit/packages_audit.h"

#include <algorithm>
#include <deque>
#include <set>
#include <thread>

#include "kernodeck/audit/leak_check.h"
#include "kernodeck/gpu/cuda_build.h"
#include "kernodeck/oci/layer_scan.h"
#include "kernodeck/os/apk.h"
#include "kernodeck/os/conda.h"
#include "kernodeck/os/dpkg.h"
#include "kernodeck/os/image_cuda.h"
#include "kernodeck/os/rpm.h"
#include "kernodeck/python/contract.h"
#include "kernodeck/python/environment.h"
#include "kernodeck/python/pins.h"
#include "kernodeck/python/record_check.h"
#include "kernodeck/python/torch_build.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::audit {

using nlohmann::json;
using report::Severity;

namespace {

// What the GPU rules read of the torch build the image's Python holds.
gpu::TorchFacts torchFacts(const python::TorchBuild& b) {
  gpu::TorchFacts f;
  f.found = b.torch.has_value();
  if (b.torch) f.version = b.torch->version, f.cuda = b.torch->cuda, f.hip = b.torch->hip;
  f.nvidiaWheels = b.nvidiaWheels;
  return f;
}

std::string layerOf(int layer) { return layer < 0 ? "" : std::to_string(layer); }

bool startsWithAny(std::string_view p, std::initializer_list<std::string_view> prefixes) {
  for (auto pre : prefixes)
    if (p.starts_with(pre)) return true;
  return false;
}

class PackagesAudit {
 public:
  PackagesAudit(const oci::FsView& v, const PackagesContext& c, report::Report& r) : v_(v), ctx_(c), r_(r) {}

  gpu::Expectation run() {
    r_.runStep("os-packages", [&] { return osPackages(); });
    r_.runStep("python", [&] { return python(); });
    return expectation_;
  }

 private:
  Status osPackages() {
    db_ = os::readDpkg(v_, true);
    json others = otherOsDatabases();
    json section = {{"manager", db_.present ? json("dpkg") : json(nullptr)}};
    if (!db_.present && !others.empty()) {
      section = others[0];  // an rpm or apk system: its database is the OS package section
      if (others.size() > 1) section["other"] = json(others.begin() + 1, others.end());
      r_.section("os_packages") = section;
      return {};
    }
    if (!others.empty()) section["other"] = others;
    if (!db_.present) {
      r_.section("os_packages") = section;
      r_.skipStep("os-packages", "no dpkg database in the image");
      return {};
    }
    json pkgs = json::array();
    for (const auto& p : db_.packages) {
      json jp = {{"name", p.name},
                 {"version", p.version},
                 {"architecture", p.architecture},
                 {"source", p.source.empty() ? p.name : p.source}};
      if (!p.sourceVersion.empty()) jp["source_version"] = p.sourceVersion;
      pkgs.push_back(jp);
    }
    section["packages"] = pkgs;
    section["count"] = db_.packages.size();
    section["files_verified"] = db_.verified;
    section["modified"] = db_.modified.size();
    section["missing"] = db_.missing.size();
    r_.section("os_packages") = section;
    for (const auto& m : db_.modified)
      r_.add(m.conffile ? "os.package.conffile.modified" : "os.package.modified",
             m.conffile ? Severity::Info : Severity::Error,
             "/" + m.path + " of package " + m.package + " differs from dpkg's md5sum" +
                 (m.conffile ? " (a configuration file)" : ""),
             {{"package", m.package}, {"path", "/" + m.path}, {"layer", layerOf(m.layer)}});
    for (const auto& m : db_.missing)
      r_.add(m.conffile ? "os.package.conffile.missing" : "os.package.missing_file",
             m.conffile ? Severity::Info : Severity::Warning, "/" + m.path + " of package " + m.package + " is missing",
             {{"package", m.package}, {"path", "/" + m.path}});
    return {};
  }

  // rpm and apk databases (package_db.h): inventory and rpm -V-like findings. Returns one
  // section per database present.
  json otherOsDatabases() {
    json out = json::array();
    for (auto* read : {&os::readRpm, &os::readApk}) {
      os::PackageDatabase db = read(v_, true);
      if (!db.present) continue;
      if (!db.error.empty()) {
        r_.add(db.readerUnavailable ? "os.package.reader-missing" : "os.package.unreadable",
               db.readerUnavailable ? Severity::Error : Severity::Warning,
               "the " + db.manager + " database cannot be read: " + db.error, {{"path", "/" + db.location}});
        out.push_back(
            {{"manager", db.manager}, {"location", "/" + db.location}, {"format", db.format}, {"error", db.error}});
        continue;
      }
      json pkgs = json::array();
      for (const auto& p : db.packages) {
        json jp = {{"name", p.name}, {"version", p.version}, {"architecture", p.architecture}, {"source", p.origin}};
        for (const auto& [k, val] : p.extra) jp[k] = val;
        pkgs.push_back(jp);
      }
      std::string what = db.manager == "rpm" ? "the rpm database" : "apk's checksum";
      for (const auto& m : db.modified)
        r_.add(m.config ? "os.package.conffile.modified" : "os.package.modified",
               m.config ? Severity::Info : Severity::Error,
               "/" + m.path + " of package " + m.package + " differs from " + what + " (" + m.detail + ")" +
                   (m.config ? " (a configuration file)" : ""),
               {{"package", m.package},
                {"path", "/" + m.path},
                {"layer", layerOf(m.layer)},
                {"manager", db.manager},
                {"verify", m.detail}});
      for (const auto& m : db.missing)
        r_.add(m.config ? "os.package.conffile.missing" : "os.package.missing_file",
               m.config ? Severity::Info : Severity::Warning, "/" + m.path + " of package " + m.package + " is missing",
               {{"package", m.package}, {"path", "/" + m.path}, {"manager", db.manager}});
      if (db.unverifiable)
        r_.add("os.package.unverifiable", Severity::Info,
               std::to_string(db.unverifiable) + " file(s) of the " + db.manager +
                   " database have a digest this view cannot compute",
               {{"path", "/" + db.location}});
      out.push_back({{"manager", db.manager},
                     {"location", "/" + db.location},
                     {"format", db.format},
                     {"packages", pkgs},
                     {"count", db.packages.size()},
                     {"files_verified", db.verified},
                     {"modified", db.modified.size()},
                     {"missing", db.missing.size()},
                     {"unverifiable", db.unverifiable}});
      osDbs_.push_back(std::move(db));
    }
    return out;
  }

  // The OS package manager that owns `path`, or "" (dpkg, rpm or apk divide authority with RECORD).
  std::string osOwner(const std::string& path) const {
    if (db_.owns(path)) return "dpkg";
    for (const auto& db : osDbs_)
      if (db.owns(path)) return db.manager;
    for (const auto& db : condaDbs_)
      if (db.owns(path)) return db.manager;
    return "";
  }

  // conda environments: conda-meta inventory, files verified against conda's sha256, and the
  // pip-installed distributions of each kept apart (with those that shadow a conda package).
  json condaEnvironments() {
    json out = json::array();
    for (const auto& prefix : os::findCondaPrefixes(v_)) {
      std::vector<std::string> errors;
      os::PackageDatabase db = os::readConda(v_, prefix, errors, true);
      for (const auto& e : errors)
        r_.add("conda.metadata.invalid", Severity::Warning, "unreadable conda package record " + e,
               {{"path", "/" + prefix + "/conda-meta"}});
      json pkgs = json::array();
      std::map<std::string, std::string> condaVersions;  // canonical name -> version
      for (const auto& p : db.packages) {
        json jp = {{"name", p.name},
                   {"version", p.version},
                   {"build", p.extra.count("build") ? p.extra.at("build") : ""},
                   {"channel", p.origin},
                   {"subdir", p.architecture}};
        for (const char* k : {"sha256", "md5"})
          if (p.extra.count(k)) jp[k] = p.extra.at(k);
        // The archive's file name only: a channel URL may carry a token (/t/TOKEN/).
        if (auto u = p.extra.find("url"); u != p.extra.end() && u->second.find('/') != std::string::npos)
          jp["file"] = u->second.substr(u->second.rfind('/') + 1);
        pkgs.push_back(jp);
        condaVersions[python::canonicalizeName(p.name)] = p.version;
      }
      for (const auto& m : db.modified)
        r_.add("conda.package.modified", Severity::Error,
               "/" + m.path + " of conda package " + m.package + " differs from conda's record (" + m.detail + ")",
               {{"package", m.package},
                {"path", "/" + m.path},
                {"layer", layerOf(m.layer)},
                {"environment", "/" + prefix},
                {"verify", m.detail}});
      for (const auto& m : db.missing)
        r_.add("conda.package.missing_file", Severity::Warning,
               "/" + m.path + " of conda package " + m.package + " is missing",
               {{"package", m.package}, {"path", "/" + m.path}, {"environment", "/" + prefix}});
      json pip = json::array();
      for (const auto& e : envs_) {
        if (e.prefix != prefix) continue;
        for (const auto& d : e.distributions) {
          if (db.owns(d.metadataDir + "/METADATA") || db.owns(d.metadataDir + "/PKG-INFO") || db.owns(d.metadataDir))
            continue;
          pip.push_back({{"name", d.name},
                         {"version", d.version},
                         {"installer", d.installer},
                         {"metadata", "/" + d.metadataDir}});
          auto it = condaVersions.find(d.key);
          if (it != condaVersions.end() && d.parsed && python::Version::parse(it->second).ok() &&
              *python::Version::parse(it->second) != *d.parsed)
            r_.add("conda.package.shadowed", Severity::Warning,
                   d.name + " " + d.version + " installed by " + (d.installer.empty() ? "pip" : d.installer) + " in /" +
                       prefix + " shadows conda's " + it->second + ": conda's record of the environment is stale",
                   {{"package", d.name}, {"environment", "/" + prefix}, {"installed", d.version}});
        }
      }
      out.push_back({{"prefix", "/" + prefix},
                     {"packages", pkgs},
                     {"count", db.packages.size()},
                     {"pip_installed", pip},
                     {"files_verified", db.verified},
                     {"modified", db.modified.size()},
                     {"missing", db.missing.size()}});
      condaDbs_.push_back(std::move(db));
    }
    return out;
  }

  Status python() {
    auto hint = ctx_.env.count("PYTHON_VERSION") ? ctx_.env.at("PYTHON_VERSION") : "";
    python::DiscoveryOptions dopt;
    dopt.pythonVersionHint = hint;
    dopt.targets = ctx_.pythonTargets;
    python::Discovery found = python::findEnvironments(v_, dopt);
    if (!found.errors.empty()) return Error::Invalid(util::join(found.errors, "; "));
    envs_ = std::move(found.envs);
    json conda = condaEnvironments();
    json envsJson = json::array();
    for (const auto& e : envs_) envsJson.push_back(checkEnv(e));
    auditLocks(v_, envs_, ctx_.architecture, ctx_.lock, r_, envsJson);
    json section = {{"environments", envsJson}, {"not_searched", found.notSearched}};
    if (!ctx_.pythonTargets.empty()) section["targets"] = ctx_.pythonTargets;
    if (!conda.empty()) section["conda"] = conda;
    python::TorchBuild build = python::readTorchBuild(v_, envs_);
    gpu::ImageCuda cuda = os::readImageCuda(v_, ctx_.env);
    gpu::TorchFacts facts = torchFacts(build);
    std::vector<std::string> inconsistencies = cuda.inconsistencies;
    for (auto& s : gpu::torchInconsistencies(facts, cuda)) inconsistencies.push_back(std::move(s));
    for (const auto& s : inconsistencies)
      r_.add("python.torch.inconsistent", Severity::Error, s, {{"package", "torch"}});
    expectation_ = gpu::expectationOf(facts, cuda, ctx_.imageDigest);
    GpuCodeContext gpuCode = ctx_.gpuCode;
    gpuCode.torchLocation = build.torch ? build.torchLocation : "";
    auditGpuCode(v_, gpuCode, expectation_, r_);
    json torch = nullptr;
    if (build.torch)
      torch = {{"version", build.torch->version}, {"cuda", build.torch->cuda},
               {"hip", build.torch->hip},         {"git_version", build.torch->gitVersion},
               {"debug", build.torch->debug},     {"location", build.torchLocation}};
    section["torch"] = torch;
    section["nvidia_wheels"] = build.nvidiaWheels;
    section["cuda_toolkit"] = cuda.toolkit;
    section["cuda_compat_driver_branches"] = cuda.compatDriverBranches;
    section["expectation"] = expectation_.toJson();
    checkPins(build);
    checkLeaks(v_, envs_, ctx_.labels, r_);
    r_.section("python") = section;
    if (envs_.empty()) r_.skipStep("python", "no Python environment in the image");
    return {};
  }

  // One environment's section: distributions, dependency contract, wheel tags, RECORD integrity.
  json checkEnv(const python::PythonEnv& e) {
    json freeze = json::array(), pkgs = inventory(e, freeze);
    for (const auto& [loc, name] : e.duplicates)
      r_.add("python.distribution.duplicate", Severity::Warning,
             name + " is installed more than once in /" + loc + ": which one Python loads is undefined",
             {{"package", name}, {"path", "/" + loc}});
    json contract = checkDependencies(e);
    json unl = json::object();  // package -> files in its directories that no RECORD lists
    size_t checkedFiles = checkFiles(e, unl);
    json paths = json::array();
    for (const auto& x : e.paths) paths.push_back("/" + x);
    return {{"kind", e.kind},
            {"creator", e.creator},
            {"prefix", "/" + e.prefix},
            {"interpreter", e.interpreter.empty() ? json(nullptr) : json("/" + e.interpreter)},
            {"python_version", e.version},
            {"include_system_site_packages", e.includeSystemSitePackages},
            {"paths", paths},
            {"packages", pkgs},
            {"freeze", freeze},
            {"contract", contract},
            {"record_files_checked", checkedFiles},
            {"unlisted", unl}};
  }

  // The distributions of `e` as the report lists them; `freeze` gets pip freeze's lines.
  json inventory(const python::PythonEnv& e, json& freeze) {
    json pkgs = json::array();
    std::set<std::string> shown;
    for (const auto& d : e.distributions) {
      json jd = {{"name", d.name},
                 {"version", d.version},
                 {"location", "/" + d.location},
                 {"metadata", "/" + d.metadataDir},
                 {"installer", d.installer},
                 {"requested", d.requested},
                 {"requires_dist", d.requiresDist},
                 {"layer", d.layer},
                 {"egg_info", d.eggInfo}};
      if (d.directUrl)
        jd["direct_url"] = {{"url", report::redactText(d.directUrl->url)}, {"editable", d.directUrl->editable}};
      // The archive it was installed from, as direct_url.json records its hash (SBOM hashes).
      if (d.directUrl && !d.directUrl->hashes.empty()) jd["archive_hashes"] = d.directUrl->hashes;
      jd["record"] = d.hasRecord;
      if (!d.form.empty()) jd["form"] = d.form;
      if (!d.codeLocation.empty()) jd["code_location"] = "/" + d.codeLocation;
      pkgs.push_back(jd);
      if (shown.insert(d.key).second)
        freeze.push_back(d.directUrl && !d.directUrl->editable ? d.name + " @ " + report::redactText(d.directUrl->url)
                                                               : d.name + "==" + d.version);
    }
    return pkgs;
  }

  // The dependency contract, in the image's environment: {"missing": [...], "conflicts": [...]}.
  json checkDependencies(const python::PythonEnv& e) {
    auto markers = python::imageMarkerEnv(e.version, ctx_.architecture);
    if (!e.fullVersionKnown) markers.erase("python_full_version"), markers.erase("implementation_version");
    markers.erase("platform_release");
    markers.erase("platform_version");
    json missing = json::array(), conflicts = json::array();
    for (const auto& issue : python::checkContract(e, markers)) {
      std::map<std::string, std::string> ev = {{"package", issue.package},
                                               {"version", issue.version},
                                               {"requirement", issue.requirement},
                                               {"environment", "/" + e.prefix}};
      switch (issue.kind) {
        case python::ContractIssue::Missing:
          missing.push_back({{"package", issue.package}, {"requirement", issue.requirement}});
          r_.add("python.requirement.missing", Severity::Error,
                 issue.package + " " + issue.version + " requires " + issue.requirement + ", which is not installed",
                 ev);
          break;
        case python::ContractIssue::Conflict:
          ev["installed"] = issue.installed;
          conflicts.push_back(
              {{"package", issue.package}, {"requirement", issue.requirement}, {"installed", issue.installed}});
          r_.add("python.requirement.conflict", Severity::Error,
                 issue.package + " " + issue.version + " requires " + issue.requirement + ", but " + issue.dependency +
                     " " + issue.installed + " is installed",
                 ev);
          break;
        case python::ContractIssue::Undecidable:
          r_.add("python.requirement.undecidable", Severity::Info,
                 issue.package + " requires " + issue.requirement + " under a marker the image cannot decide", ev);
          break;
        case python::ContractIssue::Invalid:
          r_.add("python.requirement.invalid", Severity::Warning,
                 issue.package + " " + issue.version + " declares an unparsable requirement: " + issue.requirement, ev);
          break;
      }
    }
    return {{"missing", missing}, {"conflicts", conflicts}};
  }

  // Wheel tags and RECORD integrity of `e`'s distributions; returns the RECORD rows checked. Each
  // RECORD is read once (python::RecordChecker); the view's missing SHA-256s are prepared at once.
  size_t checkFiles(const python::PythonEnv& e, json& unl) {
    size_t checkedFiles = 0;
    std::vector<const python::Distribution*> recorded;
    for (const auto& d : e.distributions)
      if (d.hasRecord) recorded.push_back(&d);
    unsigned cores = std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
    std::vector<python::RecordChecker> checkers = python::startRecordCheckers(v_, recorded, cores);
    std::vector<std::string> recordPaths;
    for (const auto& c : checkers) c.pendingHashes(recordPaths);
    v_.prepareHashes(recordPaths, "sha256");
    auto checker = checkers.begin();
    for (const auto& d : e.distributions) {
      std::string why;
      if (d.hasWheel && !python::wheelTagsSupported(d.wheel.tags, e.version, ctx_.architecture, &why))
        r_.add("python.wheel.unsupported", Severity::Error, d.name + " " + d.version + ": " + why,
               {{"package", d.name}, {"path", "/" + d.metadataDir + "/WHEEL"}});
      if (!d.directUrlError.empty())
        r_.add("python.metadata.invalid", Severity::Warning, d.name + ": " + d.directUrlError, {{"package", d.name}});
      if (!d.hasRecord) continue;
      python::RecordCheck rc = (checker++)->finish();
      checkedFiles += rc.checked;
      reportRecord(d, rc, unl);
    }
    return checkedFiles;
  }

  // The findings of one distribution's RECORD check; its unlisted files go into `unl`.
  void reportRecord(const python::Distribution& d, const python::RecordCheck& rc, json& unl) {
    // A distribution an OS package manager installed (it owns the metadata) answers to that
    // manager's database (dpkg's md5sums, rpm's digests).
    std::string distOwner = osOwner(d.metadataDir);
    if (distOwner.empty()) distOwner = osOwner(d.metadataDir + "/METADATA");
    for (const auto& m : rc.modified) {
      std::string owner = distOwner.empty() ? osOwner(m.path) : distOwner;
      bool dpkg = !owner.empty();
      r_.add("python.record.modified", dpkg ? Severity::Info : Severity::Error,
             "/" + m.path + " of " + d.name + " " + d.version + " does not match its RECORD hash" +
                 (dpkg ? " (owned by " + owner + ", whose database is the authority)" : ""),
             {{"package", d.name}, {"path", "/" + m.path}, {"layer", layerOf(m.layer)}});
    }
    for (const auto& q : rc.quirks)
      r_.add("python.record.quirk", Severity::Info, "/" + q.path + " of " + d.name + " " + d.version + ": " + q.quirk,
             {{"package", d.name}, {"path", "/" + q.path}, {"layer", layerOf(q.layer)}});
    for (const auto& m : rc.missing) {
      bool dpkg = !distOwner.empty() || !osOwner(m.path).empty();
      r_.add("python.record.missing", dpkg ? Severity::Info : Severity::Warning,
             "/" + m.path + " listed in the RECORD of " + d.name + " " + d.version + " is missing",
             {{"package", d.name}, {"path", "/" + m.path}});
    }
    if (!rc.malformedRows.empty())
      r_.add("python.record.malformed", Severity::Warning,
             "RECORD of " + d.name + " has " + std::to_string(rc.malformedRows.size()) + " malformed row(s)",
             {{"package", d.name}, {"path", "/" + d.metadataDir + "/RECORD"}});
    if (!rc.unlisted.empty()) {
      unl[d.name] = rc.unlisted;
      r_.add("python.record.unlisted", Severity::Info,
             std::to_string(rc.unlisted.size()) + " file(s) in the package directories of " + d.name +
                 " are not in its RECORD",
             {{"package", d.name}});
    }
  }

  const python::Distribution* installed(const std::string& key) const {
    for (const auto& e : envs_)
      if (auto* d = e.find(key)) return d;
    return nullptr;
  }

  void checkPins(const python::TorchBuild& build) {
    std::vector<std::pair<std::string, python::RequirementsFile>> files;
    auto inImage = [&](const std::string& p) -> std::optional<std::string> {
      auto t = v_.readFile(p, 1 << 20);
      return t.ok() ? std::optional<std::string>(*t) : std::nullopt;
    };
    auto isRequirements = [](const std::string& n) {
      return (n.rfind("requirements", 0) == 0 || n.rfind("constraints", 0) == 0) && n.ends_with(".txt");
    };
    for (const auto& p : oci::findFiles(v_, isRequirements, 4,
                                        {"proc", "sys", "dev", "usr/share", "usr/include", "usr/lib", "var/lib",
                                         "var/cache", "boot", "run", "usr/src"},
                                        {"site-packages", "dist-packages", "node_modules", "__pycache__", ".git"}))
      files.emplace_back("/" + p, python::loadRequirements(p, inImage, ctx_.env));
    auto onHost = [&](const std::string& p) -> std::optional<std::string> {
      auto t = util::readFileLimited(p, 1 << 20);
      return t.ok() ? std::optional<std::string>(*t) : std::nullopt;
    };
    for (const auto& p : ctx_.requirementsFiles) files.emplace_back(p, python::loadRequirements(p, onHost, ctx_.env));
    bool pytorchIndex = false;
    std::vector<std::string> indexes;
    for (const auto& [name, rf] : files) {
      for (const auto& e : rf.errors) r_.add("python.pin.unreadable", Severity::Warning, e, {{"path", name}});
      for (const auto& url : rf.indexUrls) {
        indexes.push_back(url);
        if (url.find("download.pytorch.org") != std::string::npos) pytorchIndex = true;
        if (report::looksLikeSecret(url))
          r_.add("secret.leak", Severity::Error,
                 "index URL with a credential in " + name + ": " + report::redactText(url), {{"path", name}});
      }
      for (const auto& line : rf.lines) {
        std::string where = line.file + ":" + std::to_string(line.line);
        if (!line.req) {
          r_.add("python.pin.invalid", Severity::Warning, "cannot parse requirement at " + where + ": " + line.error,
                 {{"path", where}});
          continue;
        }
        const auto& req = *line.req;
        if (report::looksLikeSecret(req.url))
          r_.add("secret.leak", Severity::Error, "requirement URL with a credential at " + where, {{"path", where}});
        if (rf.usesHashes && !python::isPinned(req) && req.url.empty())
          r_.add("python.pin.unpinned", Severity::Warning,
                 req.name + " at " + where +
                     " is not pinned with == in a hash-checked file (pip --require-hashes refuses it)",
                 {{"path", where}, {"package", req.name}});
        const python::Distribution* d = installed(req.key);
        if (!d) {
          if (!line.constraint && python::isPinned(req))
            r_.add("python.pin.missing", Severity::Error, req.text + " is pinned at " + where + " but not installed",
                   {{"path", where}, {"package", req.name}});
          continue;
        }
        if (!req.specifier.empty() && d->parsed && !req.specifier.contains(*d->parsed, true))
          r_.add("python.pin.mismatch", Severity::Error,
                 req.name + " is pinned as " + req.specifier.str() + " at " + where + " but " + d->version +
                     " is installed",
                 {{"path", where}, {"package", req.name}, {"installed", d->version}});
        else if (python::isPinned(req) && d->parsed) {
          auto pinned = python::Version::parse(req.specifier.specs()[0].version());
          if (pinned.ok() && pinned->localStr() != d->parsed->localStr())
            r_.add("python.pin.local_label", Severity::Warning,
                   req.name + " is pinned as " + pinned->str() + " at " + where + " but " + d->version +
                       " is installed: the local label (build variant) differs",
                   {{"path", where}, {"package", req.name}, {"installed", d->version}});
        }
        if (!line.hashes.empty() && d->directUrl && !d->directUrl->hashes.empty()) {
          auto it = d->directUrl->hashes.find("sha256");
          if (it != d->directUrl->hashes.end() &&
              std::find(line.hashes.begin(), line.hashes.end(), "sha256:" + it->second) == line.hashes.end())
            r_.add("python.pin.hash_mismatch", Severity::Error,
                   req.name + " was installed from an archive whose sha256 is not among the hashes pinned at " + where,
                   {{"path", where}, {"package", req.name}});
        }
      }
    }
    if (build.torch) {
      std::string tv = build.torch->version;
      size_t plus = tv.find('+');
      std::string local = plus == std::string::npos ? "" : tv.substr(plus + 1);
      if (local.rfind("cu", 0) == 0 && !indexes.empty() && !pytorchIndex)
        r_.add("python.torch.index", Severity::Warning,
               "torch " + tv + " is a +" + local +
                   " build, but no requirement file names an index that serves it "
                   "(download.pytorch.org/whl/" +
                   local + "): a rebuild would not get the same wheel",
               {{"package", "torch"}});
    }
  }

  const oci::FsView& v_;
  const PackagesContext& ctx_;
  report::Report& r_;
  os::DpkgDatabase db_;
  std::vector<os::PackageDatabase> osDbs_;  // rpm, apk
  std::vector<os::PackageDatabase> condaDbs_;
  std::vector<python::PythonEnv> envs_;
  gpu::Expectation expectation_;
};

}  // namespace

uint64_t packagesCaptureLimit(const std::string& path) {
  return std::max({python::captureLimit(path), os::dpkgCaptureLimit(path), os::rpmCaptureLimit(path),
                   os::apkCaptureLimit(path), os::condaCaptureLimit(path), python::recordCaptureLimit(path)});
}

unsigned packagesHashPolicy(const std::string& p) {
  // Compiled bytecode: dpkg ships none (it is compiled after install) and checkRecord skips it.
  // apt's lists and dpkg's own database are state, not package content.
  if (p.ends_with(".pyc") || startsWithAny(p, {"var/lib/apt/lists/", "var/lib/dpkg/", "var/cache/", "var/log/"}))
    return 0;
  bool sitePackages = p.find("site-packages/") != std::string::npos;
  // pip, uv and conda territory: dpkg installs nothing into a site-packages directory, under
  // /usr/local/lib/pythonX.Y, or in home directories (NVIDIA's CUDA .debs do use /usr/local/cuda*).
  bool md5 =
      !sitePackages && !startsWithAny(p, {"usr/local/lib/python", "usr/local/bin/", "home/", "root/", "opt/conda/"});
  // dpkg territory outside Python's package directories, where no RECORD is expected (some of
  // Debian's python3-* packages do keep a RECORD, so dist-packages is always hashed); pip as
  // root writes to /usr/local.
  bool dpkgTree = startsWithAny(p, {"usr/", "bin/", "sbin/", "lib/", "lib32/", "lib64/", "libx32/", "etc/", "var/"}) &&
                  !startsWithAny(p, {"usr/local/"});
  bool sha256 = !dpkgTree || sitePackages || p.find("dist-packages/") != std::string::npos;
  return (sha256 ? oci::kHashSha256 : 0u) | (md5 ? oci::kHashMd5 : 0u);
}

gpu::Expectation auditPackages(const oci::FsView& view, const PackagesContext& ctx, report::Report& r) {
  return PackagesAudit(view, ctx, r).run();
}

}  // namespace kernodeck::audit
