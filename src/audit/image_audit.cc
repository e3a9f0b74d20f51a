// The audit pipeline. Steps, in order: resolve, manifest, config, layers, os.
// A step that cannot complete stops the pipeline (later steps stay
// not_reached); problems that do not stop it (a digest mismatch, a hostile tar
// entry, a leaked credential) are findings, all collected.
#include "kernodeck/audit/image_audit.h"

#include <sys/stat.h>

#include <atomic>
#include <set>
#include <thread>

#include "kernodeck/os/os_release.h"
#include "kernodeck/audit/packages_audit.h"
#include "kernodeck/oci/image_ref.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/oci/scan_cache.h"
#include "kernodeck/oci/schema_check.h"
#include "kernodeck/oci/source.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/version.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::audit {

using nlohmann::json;
using report::Severity;

namespace {

uint64_t defaultCapture(const std::string& p) { return p == "etc/os-release" || p == "usr/lib/os-release" ? 64 * 1024 : 0; }

std::string hashHex(const std::string& alg, const std::string& bytes) {
  util::Hasher h(alg);
  h.update(bytes);
  return h.hex();
}

// Reads a layer again for files its walk left unhashed (packagesHashPolicy guessed that no
// package database would ask for them), and records the hashes in its cached result.
std::map<std::string, oci::LayeredView::FileHashes> rehashLayer(oci::ImageSource& source, const oci::Descriptor& d,
                                                               const std::set<std::string>& paths) {
  std::map<std::string, oci::LayeredView::FileHashes> out;
  auto stream = source.openBlob(d);
  if (!stream.ok()) return out;
  oci::ScanOptions so;
  so.digestAlgorithm = d.digest.verifiable() ? d.digest.algorithm : "sha256";
  so.hashes = [&paths](const std::string& p) { return paths.count(p) ? oci::kHashSha256 | oci::kHashMd5 | oci::kHashSha1 : 0u; };
  oci::LayerScan scan = oci::scanLayer(**stream, so);
  if (scan.error || scan.digestHex != d.digest.encoded) return out;  // not the bytes the walk read
  for (const auto& e : scan.entries)
    if (!e.sha256.empty() && paths.count(e.path)) out[e.path] = {e.sha256, e.md5, e.sha1};
  if (auto cached = oci::loadScan(source.scanCacheDir(), d.digest)) {
    for (auto& e : cached->entries)
      if (auto it = out.find(e.path); it != out.end() && e.kind == oci::EntryKind::File) {
        e.sha256 = it->second.sha256;
        e.md5 = it->second.md5;
        e.sha1 = it->second.sha1;
      }
    oci::storeScan(source.scanCacheDir(), d.digest, *cached);
  }
  return out;
}

class Pipeline {
 public:
  Pipeline(const std::string& reference, const AuditOptions& opts, AuditResult& out)
      : reference_(reference), opts_(opts), out_(out), r_(out.report) {}

  void run() {
    r_.subject()["reference"] = reference_;
    auto ref = oci::parseImageRef(reference_);
    std::string transportNote;
    if (ref.ok() && ref->transport == oci::Transport::Registry && !reference_.starts_with("docker://") &&
        oci::looksLikeLocalPath(reference_)) {
      ref = oci::detectLocalRef(reference_);
      if (ref.ok())
        transportNote = std::string("no transport was given; '") + reference_ + "' holds what " + oci::toString(ref->transport) +
                        ": reads, so it was read as " + oci::toString(ref->transport) + ":" + reference_;
    }
    struct stat st {};
    if (ref.ok() && ref->transport == oci::Transport::Dir && ::stat(ref->path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
        ::stat((ref->path + "/manifest.json").c_str(), &st) != 0) {
      ref->transport = oci::Transport::RootFs;
      transportNote = "dir:" + ref->path + " has no manifest.json, so it was read as a root filesystem; in skopeo's terms "
                      "dir: is a directory of blobs and a manifest: name a root filesystem rootfs:" + ref->path;
    }
    if (!transportNote.empty())
      r_.add("reference.transport", Severity::Info, transportNote, {{"transport", oci::toString(ref->transport)}});
    if (ref.ok() && ref->transport == oci::Transport::RootFs) {
      runDir(*ref);
      return;
    }
    r_.declareSteps({"resolve", "manifest", "config", "layers", "os", "os-packages", "python"});
    r_.runStep("resolve", [&]() -> Status {
      if (!ref.ok()) return ref.error();
      ref_ = *ref;
      r_.subject()["transport"] = oci::toString(ref_.transport);
      if (ref_.transport == oci::Transport::Registry) {
        std::string raw = ref_.raw.rfind("docker://", 0) == 0 ? ref_.raw.substr(9) : ref_.raw;
        KDK_TRY_ASSIGN(registry::Reference rr, registry::parseReference(raw));
        r_.subject()["registry"] = rr.registry;
        r_.subject()["repository"] = rr.repository;
        r_.subject()["normalized"] = rr.str();
        KDK_TRY_ASSIGN(source_, registry::openRegistrySource(rr, opts_.registry));
      } else {
        KDK_TRY_ASSIGN(source_, oci::openImageSource(ref_));
      }
      auto top = source_->resolve();
      for (const auto& f : source_->findings())
        r_.add(f.code, report::parseSeverity(f.severity).value_or(Severity::Error), f.message, f.evidence);
      if (!top.ok()) return top.error();
      top_ = *top;
      return {};
    });
    r_.runStep("manifest", [&] { return readManifest(); });
    if (!r_.failed() && !oci::imageConfigType(manifest_.config.mediaType)) {
      runArtifact();
      return;
    }
    r_.runStep("config", [&] { return readConfig(); });
    std::string key = r_.failed() ? std::string() : resultKey();
    if (!key.empty() && replayResult(key)) return;
    size_t findingsBefore = r_.findings().size();
    nlohmann::json sectionsBefore = r_.sections();
    r_.runStep("layers", [&] { return walkLayers(); });
    r_.runStep("os", [&] { return detectOs(); });
    runPackages();
    if (!key.empty() && !r_.failed()) storeResult(key, findingsBefore, sectionsBefore);
  }

 private:
  void runPackages() {
    if (r_.failed() || !out_.view) return;
    PackagesContext ctx;
    ctx.architecture = config_.platform.architecture.empty() ? oci::hostPlatform().architecture
                                                             : oci::normalize(config_.platform).architecture;
    for (const auto& e : config_.env) {
      size_t eq = e.find('=');
      if (eq != std::string::npos) ctx.env[e.substr(0, eq)] = e.substr(eq + 1);
    }
    ctx.labels = config_.labels;
    if (r_.subject().contains("manifest_digest") && r_.subject()["manifest_digest"].is_string())
      ctx.imageDigest = r_.subject()["manifest_digest"].get<std::string>();
    ctx.requirementsFiles = opts_.requirementsFiles;
    ctx.pythonTargets = opts_.pythonTargets;
    out_.expectation = auditPackages(*out_.view, ctx, r_);
  }

  // The steps after "config" depend only on the image's content (the manifest pins every blob),
  // the options and this build of Kernodeck, so their outcome is kept under a key of all three,
  // as scanners keep an artifact's analysis (Trivy's artifact cache). Registry sources only,
  // like the blob and per-layer caches; --reanalyze bypasses it.
  static constexpr const char* kResultSteps[] = {"layers", "os", "os-packages", "python"};

  std::string resultKey() const {
    std::string dir = source_->scanCacheDir();
    if (dir.empty() || !opts_.reuseResults || opts_.capture || source_->synthetic()) return {};
    util::Hasher h("sha256");
    h.update("kernodeck.image-result/v1\n");
    h.update(std::string(kVersion) + "\n");
    // Any rebuild of the binary changes the analysis it may do: its size and time are in the key.
    struct stat st {};
    if (::stat("/proc/self/exe", &st) != 0) return {};
    h.update(std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "\n");
    h.update(manifestDesc_.digest.str() + "\n" + manifest_.config.digest.str() + "\n");
    h.update((opts_.platform ? oci::normalize(*opts_.platform).str() : oci::hostPlatform().str()) + "\n");
    for (const auto& t : opts_.pythonTargets) h.update("python " + t + "\n");
    for (const auto& f : opts_.requirementsFiles) {
      auto content = util::readFileLimited(f, 16u << 20);
      if (!content.ok()) return {};
      h.update(f + "\n" + util::sha256Hex(*content) + "\n");
    }
    return dir + "/results/sha256/" + h.hex() + ".json";
  }

  void storeResult(const std::string& path, size_t findingsBefore, const nlohmann::json& sectionsBefore) {
    json rec = {{"steps", json::object()}, {"sections", json::object()}, {"findings", json::array()},
                {"expectation", out_.expectation.toJson()}};
    for (const char* name : kResultSteps)
      for (const auto& st : r_.steps())
        if (st.name == name) rec["steps"][name] = {{"status", report::toString(st.status)}, {"reason", st.error}};
    for (auto it = r_.sections().begin(); it != r_.sections().end(); ++it)
      if (!sectionsBefore.contains(it.key())) rec["sections"][it.key()] = it.value();
    for (size_t i = findingsBefore; i < r_.findings().size(); ++i) {
      const auto& f = r_.findings()[i];
      rec["findings"].push_back({{"code", f.code}, {"severity", report::toString(f.severity)}, {"message", f.message},
                                 {"evidence", f.evidence}});
    }
    util::makeDirs(path.substr(0, path.rfind('/')));
    // A cache: failing to keep it is not an error, and a torn entry does not parse (not synced).
    (void)util::writeFileAtomic(path, rec.dump(), false);
  }

  // Replays a stored outcome; false (nothing changed) when there is none or it does not parse.
  bool replayResult(const std::string& path) {
    auto text = util::readFileLimited(path, 256u << 20);
    if (!text.ok()) return false;
    json rec = json::parse(*text, nullptr, false);
    if (!rec.is_object() || !rec.contains("steps") || !rec["steps"].is_object() || !rec.contains("findings") ||
        !rec["findings"].is_array() || !rec.contains("sections") || !rec["sections"].is_object())
      return false;
    std::vector<report::Finding> findings;
    for (const auto& f : rec["findings"]) {
      if (!f.is_object() || !f.contains("severity") || !f["severity"].is_string()) return false;
      auto sev = report::parseSeverity(f["severity"].get<std::string>());
      if (!sev) return false;
      report::Finding fi{f.value("code", ""), *sev, f.value("message", ""), {}};
      if (f.contains("evidence") && f["evidence"].is_object())
        for (auto it = f["evidence"].begin(); it != f["evidence"].end(); ++it)
          if (it.value().is_string()) fi.evidence[it.key()] = it.value().get<std::string>();
      findings.push_back(std::move(fi));
    }
    auto expectation = gpu::parseExpectation(rec.value("expectation", json::object()).dump());
    if (!expectation.ok()) return false;
    for (const char* name : kResultSteps) {
      if (!rec["steps"].contains(name) || !rec["steps"][name].is_object()) return false;
      std::string status = rec["steps"][name].value("status", "");
      if (status != "passed" && status != "skipped") return false;
    }
    for (const char* name : kResultSteps) {
      const json& st = rec["steps"][name];
      r_.restoreStep(name, st["status"] == "passed" ? report::StepStatus::Passed : report::StepStatus::Skipped,
                     st.value("reason", ""));
    }
    for (auto it = rec["sections"].begin(); it != rec["sections"].end(); ++it) r_.section(it.key()) = it.value();
    for (auto& f : findings) r_.add(std::move(f));
    out_.expectation = *expectation;
    r_.subject()["cached_result"] = path.substr(path.rfind('/') + 1, 64);
    return true;
  }

  // An OCI artifact (a manifest whose config is not an image config: the empty descriptor or
  // the artifact's own type): its blobs are verified, nothing is unpacked or run.
  void runArtifact() {
    std::string type = !manifest_.artifactType.empty() ? manifest_.artifactType : manifest_.config.mediaType;
    r_.subject()["artifact_type"] = type;
    std::string why = "an OCI artifact (" + type + "), not a container image";
    r_.skipStep("config", why);
    r_.runStep("layers", [&]() -> Status {
      json blobs = json::array();
      std::vector<std::pair<const oci::Descriptor*, std::string>> all = {{&manifest_.config, "config"}};
      for (size_t i = 0; i < manifest_.layers.size(); ++i) all.push_back({&manifest_.layers[i], "layer " + std::to_string(i)});
      for (const auto& [d, what] : all) {
        json bj = {{"digest", d->digest.str()}, {"media_type", d->mediaType}, {"size", d->size}};
        auto title = d->annotations.find("org.opencontainers.image.title");
        if (title != d->annotations.end()) bj["title"] = title->second;
        bj["verified"] = verifyBlob(*d, what);
        blobs.push_back(bj);
      }
      r_.section("artifact") = {{"artifact_type", type}, {"blobs", blobs}};
      return {};
    });
    for (const char* step : {"os", "os-packages", "python"}) r_.skipStep(step, why);
  }

  // Streams a blob and checks its size and digest; false (with a finding) when it is missing,
  // unverifiable or does not match.
  bool verifyBlob(const oci::Descriptor& d, const std::string& what) {
    std::map<std::string, std::string> ev = {{"digest", d.digest.str()}, {"blob", what}};
    if (!d.digest.verifiable()) {
      unverifiable(d, what);
      return false;
    }
    auto stream = source_->openBlob(d);
    if (!stream.ok()) {
      r_.add("blob.missing", Severity::Error, stream.error().message, ev);
      return false;
    }
    oci::ScanOptions so;
    so.hashOnly = true;
    so.digestAlgorithm = d.digest.algorithm;
    oci::LayerScan scan = oci::scanLayer(**stream, so);
    ev["path"] = source_->where(d);
    if (scan.error) {
      r_.add("blob.missing", Severity::Error, what + " " + d.digest.str() + " could not be read: " + scan.error->message, ev);
      return false;
    }
    if (static_cast<int64_t>(scan.compressedSize) != d.size) {
      r_.add("blob.digest.mismatch", Severity::Error,
             what + " " + d.digest.str() + " has " + std::to_string(scan.compressedSize) + " bytes, its descriptor says " +
                 std::to_string(d.size),
             ev);
      return false;
    }
    if (scan.digestHex != d.digest.encoded) {
      r_.add("blob.digest.mismatch", Severity::Error,
             what + " bytes hash to " + d.digest.algorithm + ":" + scan.digestHex + ", not " + d.digest.str(), ev);
      return false;
    }
    return true;
  }

  // The image-spec schema of a document, as findings naming the field.
  void checkSchema(const std::string& bytes, const char* code, const oci::Descriptor& d,
                   std::vector<oci::SchemaIssue> (*check)(const json&, std::string_view)) {
    json j = json::parse(bytes, nullptr, false);
    if (j.is_discarded()) return;  // the parser reports it
    for (const auto& issue : check(j, d.mediaType))
      r_.add(code, Severity::Error, (issue.field.empty() ? std::string("document") : issue.field) + ": " + issue.message,
             {{"field", issue.field}, {"digest", d.digest.str()}});
  }

  void runDir(const oci::ImageRef& ref) {
    r_.declareSteps({"resolve", "os", "os-packages", "python"});
    r_.subject()["transport"] = oci::toString(ref.transport);
    r_.subject()["path"] = ref.path;
    r_.runStep("resolve", [&]() -> Status {
      KDK_TRY_ASSIGN(out_.view, oci::openDirView(ref.path));
      return {};
    });
    r_.runStep("os", [&] { return detectOs(); });
    runPackages();
  }

  // Reads a small blob and checks its size and digest; mismatches are findings.
  Result<std::string> readVerified(const oci::Descriptor& d, const char* what) {
    if (!d.digest.verifiable()) unverifiable(d, what);
    KDK_TRY_ASSIGN(auto stream, source_->openBlob(d));
    KDK_TRY_ASSIGN(std::string bytes, oci::readAll(*stream, oci::kMaxManifestBytes, std::string(what) + " " + d.digest.str()));
    if (static_cast<int64_t>(bytes.size()) != d.size) {
      r_.add("blob.digest.mismatch", Severity::Error,
             std::string(what) + " " + d.digest.str() + " has " + std::to_string(bytes.size()) +
                 " bytes, its descriptor says " + std::to_string(d.size),
             {{"digest", d.digest.str()}, {"blob", what}, {"path", source_->where(d)}});
    } else if (!d.digest.verifiable()) {
      // reported above
    } else if (hashHex(d.digest.algorithm, bytes) != d.digest.encoded) {
      r_.add("blob.digest.mismatch", Severity::Error,
             std::string(what) + " bytes hash to " + d.digest.algorithm + ":" + hashHex(d.digest.algorithm, bytes) +
                 ", not " + d.digest.str(),
             {{"digest", d.digest.str()}, {"blob", what}, {"path", source_->where(d)}});
    }
    return bytes;
  }

  // blob.digest.unverifiable, once per digest: an algorithm other than sha256 and sha512.
  void unverifiable(const oci::Descriptor& d, const std::string& what) {
    if (!unverifiable_.insert(d.digest.str()).second) return;
    r_.add("blob.digest.unverifiable", Severity::Error,
           what + " uses digest algorithm '" + d.digest.algorithm + "', which Kernodeck cannot verify",
           {{"digest", d.digest.str()}, {"blob", what}});
  }

  Status readManifest() {
    KDK_TRY_ASSIGN(std::string bytes, readVerified(top_, "manifest"));
    KDK_TRY_ASSIGN(oci::DocKind kind, oci::detectKind(bytes, top_.mediaType));
    manifestDesc_ = top_;
    if (kind == oci::DocKind::Index) checkSchema(bytes, "index.schema.invalid", top_, oci::checkIndexSchema);
    else if (!source_->synthetic()) checkSchema(bytes, "manifest.schema.invalid", top_, oci::checkManifestSchema);
    oci::Platform want = opts_.platform ? *opts_.platform : oci::hostPlatform();
    if (kind == oci::DocKind::Index) {
      auto index = oci::parseIndex(bytes);
      if (!index.ok()) return Error::Invalid("index " + top_.digest.str() + ": " + index.error().message);
      r_.subject()["index_digest"] = top_.digest.str();
      KDK_TRY_ASSIGN(size_t pick, oci::selectPlatform(*index, want));
      manifestDesc_ = index->manifests[pick];
      KDK_TRY_ASSIGN(bytes, readVerified(manifestDesc_, "manifest"));
      KDK_TRY_ASSIGN(kind, oci::detectKind(bytes, manifestDesc_.mediaType));
      if (kind != oci::DocKind::Manifest) return Error::Unsupported("nested image indexes are not supported");
      checkSchema(bytes, "manifest.schema.invalid", manifestDesc_, oci::checkManifestSchema);
      if (manifestDesc_.platform) {
        r_.subject()["platform"] = oci::normalize(*manifestDesc_.platform).str();
      } else {
        r_.add("index.platform.missing", Severity::Info,
               "index entry " + manifestDesc_.digest.str() + " names no platform; it is the only such entry, so it was "
               "chosen, and its platform is the one its config declares",
               {{"digest", manifestDesc_.digest.str()}});
      }
    }
    auto m = oci::parseManifest(bytes);
    if (!m.ok()) return Error::Invalid("manifest " + manifestDesc_.digest.str() + ": " + m.error().message);
    manifest_ = *m;
    if (source_->synthetic()) r_.subject()["manifest_digest"] = nullptr;
    else r_.subject()["manifest_digest"] = manifestDesc_.digest.str();
    r_.subject()["media_type"] = manifest_.mediaType;
    if (!source_->tag().empty()) r_.subject()["tag"] = source_->tag();
    return {};
  }

  Status readConfig() {
    KDK_TRY_ASSIGN(std::string bytes, readVerified(manifest_.config, "config"));
    checkSchema(bytes, "config.schema.invalid", manifest_.config,
                [](const json& j, std::string_view) { return oci::checkConfigSchema(j); });
    auto c = oci::parseConfig(bytes);
    if (!c.ok()) return Error::Invalid("config " + manifest_.config.digest.str() + ": " + c.error().message);
    config_ = *c;
    if (!r_.subject().contains("platform")) r_.subject()["platform"] = oci::normalize(config_.platform).str();
    oci::Platform want = opts_.platform ? oci::normalize(*opts_.platform) : oci::hostPlatform();
    oci::Platform have = oci::normalize(config_.platform);
    if (have.os != want.os || have.architecture != want.architecture)
      r_.add("image.platform.mismatch", Severity::Warning,
             "image is built for " + have.str() + ", not " + want.str(), {{"digest", manifest_.config.digest.str()}});
    if (config_.diffIds.size() != manifest_.layers.size())
      return Error::Invalid("config lists " + std::to_string(config_.diffIds.size()) + " diff_ids for " +
                            std::to_string(manifest_.layers.size()) + " layers");
    describeImage();
    checkTag();
    return {};
  }

  void describeImage() {
    json img;
    img["config_digest"] = manifest_.config.digest.str();
    img["architecture"] = config_.platform.architecture;
    img["os"] = config_.platform.os;
    if (!config_.platform.variant.empty()) img["variant"] = config_.platform.variant;
    img["created"] = config_.created;
    img["user"] = config_.user;
    img["working_dir"] = config_.workingDir;
    img["entrypoint"] = config_.entrypoint;
    img["cmd"] = config_.cmd;
    json env = json::array();
    for (const auto& e : config_.env) {
      size_t eq = e.find('=');
      std::string name = e.substr(0, eq);
      std::string value = eq == std::string::npos ? "" : e.substr(eq + 1);
      bool secret = !value.empty() && (report::isSecretName(name) || report::looksLikeSecret(value));
      if (secret)
        r_.add("image.secret.env", Severity::Error,
               "environment variable " + name + " in the image config holds a credential (value redacted)",
               {{"variable", name}, {"digest", manifest_.config.digest.str()}});
      env.push_back(secret ? name + "=<redacted>" : report::redactText(e));
    }
    img["env"] = env;
    json labels = json::object();
    for (const auto& [k, v] : config_.labels)
      labels[k] = !v.empty() && report::isSecretName(k) ? std::string("<redacted>") : report::redactText(v);
    img["labels"] = labels;
    json hist = json::array();
    for (const auto& h : config_.history) {
      if (!h.is_object()) continue;
      json hh;
      for (const char* k : {"created", "created_by", "comment"})
        if (h.contains(k) && h[k].is_string()) hh[k] = report::redactText(h[k].get<std::string>());
      hh["empty_layer"] = h.contains("empty_layer") && h["empty_layer"].is_boolean() && h["empty_layer"].get<bool>();
      hist.push_back(hh);
    }
    img["history"] = hist;
    r_.section("image") = img;
  }

  // Only a registry tag or a layout's index.json name can be moved to other content under the
  // same reference; an archive or skopeo dir: holds the bytes it holds (and its transport has
  // no @digest form to pin with).
  void checkTag() {
    if (!ref_.mutableTag()) return;
    if (ref_.transport != oci::Transport::Registry && ref_.transport != oci::Transport::OciLayout) return;
    std::string pin;
    if (source_->synthetic()) {
      pin = "the legacy archive has no manifest digest; its image ID is " + manifest_.config.digest.str();
    } else {
      std::string d = r_.subject().contains("index_digest") ? r_.subject()["index_digest"].get<std::string>()
                                                              : manifestDesc_.digest.str();
      if (ref_.transport == oci::Transport::OciLayout) pin = "pin it as oci:" + ref_.path + "@" + d;
      else if (ref_.transport == oci::Transport::Registry && r_.subject().contains("registry"))
        pin = "pin it as " + r_.subject()["registry"].get<std::string>() + "/" + r_.subject()["repository"].get<std::string>() + "@" + d;
      else pin = "pin digest " + d;
    }
    std::string what = source_->tag().empty() ? "no tag or digest" : "tag '" + source_->tag() + "'";
    r_.add("image.tag.mutable", Severity::Warning,
           "the reference names " + what + ", which can move; " + pin,
           {{"digest", source_->synthetic() ? manifest_.config.digest.str() : manifestDesc_.digest.str()}});
  }

  Status walkLayers() {
    auto view = std::make_unique<oci::LayeredView>();
    oci::ScanOptions so = layerScanOptions(opts_);
    // Read the layers in parallel (bounded), then apply them in order.
    size_t n = manifest_.layers.size();
    std::vector<std::optional<oci::LayerScan>> scans(n);
    std::vector<std::optional<Error>> openErrors(n);
    unsigned workers = opts_.parallelLayers ? opts_.parallelLayers : std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
    std::atomic<size_t> next{0};
    // Shared results, like the local ones, only for content-addressed sources.
    bool shareable = opts_.sharedScans && ref_.transport == oci::Transport::Registry;
    auto work = [&] {
      for (size_t i; (i = next++) < n;) {
        const oci::Descriptor& d = manifest_.layers[i];
        if (auto cached = oci::loadScan(source_->scanCacheDir(), d.digest); cached && static_cast<int64_t>(cached->compressedSize) == d.size) {
          scans[i] = std::move(*cached);
          continue;
        }
        if (auto shared = shareable ? opts_.sharedScans->load(d) : std::nullopt) {
          oci::storeScan(source_->scanCacheDir(), d.digest, *shared);
          scans[i] = std::move(*shared);
          continue;
        }
        auto stream = source_->openBlob(d);
        if (!stream.ok()) {
          openErrors[i] = stream.error();
          continue;
        }
        oci::ScanOptions mine = so;
        mine.digestAlgorithm = d.digest.verifiable() ? d.digest.algorithm : "sha256";
        mine.hashOnly = oci::encryptedLayer(d.mediaType);  // not a tar until decrypted
        scans[i] = oci::scanLayer(**stream, mine);
        // Only a complete scan of bytes that matched their digest is worth keeping.
        if (!scans[i]->error && scans[i]->digestHex == d.digest.encoded && static_cast<int64_t>(scans[i]->compressedSize) == d.size) {
          oci::storeScan(source_->scanCacheDir(), d.digest, *scans[i]);
          if (shareable) opts_.sharedScans->store(d, *scans[i]);
        }
      }
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < std::min<size_t>(workers, n); ++w) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();

    json layers = json::array();
    std::optional<Error> firstError;
    for (size_t i = 0; i < n; ++i) {
      const oci::Descriptor& d = manifest_.layers[i];
      std::string layerName = std::to_string(i) + ":" + d.digest.str();
      json lj = {{"index", i}, {"digest", d.digest.str()}, {"media_type", d.mediaType}, {"size", d.size}};
      oci::Compression declared = oci::layerCompression(d.mediaType);
      bool encrypted = oci::encryptedLayer(d.mediaType);
      if (encrypted)
        r_.add("layer.encrypted", Severity::Warning,
               "layer is encrypted (" + d.mediaType + "): its blob is verified, but its files cannot be inspected, so "
               "the filesystem view lacks them",
               {{"layer", layerName}, {"digest", d.digest.str()}});
      else if (declared == oci::Compression::Unknown)
        r_.add("layer.mediatype.unknown", Severity::Warning, "layer media type '" + d.mediaType + "' is not a known layer type",
               {{"layer", layerName}});
      if (!d.digest.verifiable()) unverifiable(d, "layer " + layerName);
      if (openErrors[i]) {
        r_.add("blob.missing", Severity::Error, openErrors[i]->message, {{"layer", layerName}, {"digest", d.digest.str()}});
        if (!firstError) firstError = openErrors[i];
        layers.push_back(lj);
        continue;
      }
      oci::LayerScan& scan = *scans[i];
      verifyLayer(d, i, layerName, scan);
      if (encrypted) {
        lj["encrypted"] = true;
        if (scan.error && !firstError) firstError = Error{scan.error->code, "layer " + layerName + ": " + scan.error->message};
        layers.push_back(lj);
        scans[i].reset();
        continue;
      }
      if (declared != oci::Compression::Unknown && scan.detected != oci::Compression::Unknown && declared != scan.detected &&
          !scan.error)
        r_.add("layer.mediatype.mismatch", Severity::Warning,
               std::string("layer is ") + oci::toString(scan.detected) + " but its media type says " + oci::toString(declared),
               {{"layer", layerName}});
      for (const auto& u : scan.unsafe)
        r_.add("layer.path.unsafe", Severity::Error, "refused tar entry '" + u.name + "': " + u.reason,
               {{"layer", layerName}, {"path", u.name}});
      std::vector<oci::UnsafeEntry> refused, suspicious = scan.suspicious;
      view->apply(scan, static_cast<int>(i), refused, suspicious);
      for (const auto& u : refused)
        r_.add("layer.path.unsafe", Severity::Error, "refused tar entry '" + u.name + "': " + u.reason,
               {{"layer", layerName}, {"path", u.name}});
      for (const auto& u : suspicious)
        r_.add("layer.path.suspicious", Severity::Warning, "tar entry '" + u.name + "': " + u.reason,
               {{"layer", layerName}, {"path", u.name}});
      lj["uncompressed_size"] = scan.uncompressedSize;
      lj["diff_id"] = "sha256:" + scan.diffIdHex;
      lj["compression"] = oci::toString(scan.detected);
      lj["files"] = scan.fileCount;
      if (scan.error) {
        lj["error"] = scan.error->message;
        if (!firstError) firstError = Error{scan.error->code, "layer " + layerName + ": " + scan.error->message};
      }
      layers.push_back(lj);
      scans[i].reset();  // the view holds what is needed now
    }
    r_.section("layers") = layers;
    view->setHashFiller([source = source_, descs = manifest_.layers](int layer, const std::set<std::string>& paths) {
      return rehashLayer(*source, descs.at(static_cast<size_t>(layer)), paths);
    });
    json fs = {{"entries", view->size()}};
    r_.section("filesystem") = fs;
    out_.view = std::move(view);
    if (firstError) return *firstError;
    return {};
  }

  void verifyLayer(const oci::Descriptor& d, size_t i, const std::string& layerName, const oci::LayerScan& scan) {
    std::map<std::string, std::string> ev = {{"layer", layerName}, {"digest", d.digest.str()}, {"path", source_->where(d)}};
    if (static_cast<int64_t>(scan.compressedSize) != d.size) {
      r_.add("blob.digest.mismatch", Severity::Error,
             "layer blob has " + std::to_string(scan.compressedSize) + " bytes, its descriptor says " + std::to_string(d.size), ev);
    } else if (!d.digest.verifiable()) {
      // reported by walkLayers()
    } else if (source_->synthetic()) {
      // A legacy docker-archive names each layer by its DiffID: checked below, after inflating.
    } else if (scan.digestHex != d.digest.encoded && !scan.digestHex.empty()) {  // empty: the stream failed first
      r_.add("blob.digest.mismatch", Severity::Error,
             "layer bytes hash to " + d.digest.algorithm + ":" + scan.digestHex + ", not " + d.digest.str(), ev);
    }
    if (scan.error || oci::encryptedLayer(d.mediaType)) return;  // no DiffID: unread, or still encrypted
    const oci::Digest& want = config_.diffIds[i];
    if (want.algorithm != "sha256") {
      if (unverifiable_.insert(want.str()).second)
        r_.add("blob.digest.unverifiable", Severity::Error,
               "the config's diff_id " + want.str() + " for layer " + layerName + " uses an algorithm other than sha256, "
               "which DiffIDs must use",
               {{"digest", want.str()}, {"blob", "diff_id"}, {"layer", layerName}});
    } else if (want.encoded != scan.diffIdHex) {
      ev["kind"] = "diff_id";
      r_.add("blob.digest.mismatch", Severity::Error,
             "uncompressed layer hashes to sha256:" + scan.diffIdHex + ", but the config's diff_id is " + want.str(), ev);
    }
  }

  Status detectOs() {
    std::string text;
    for (const char* p : {"etc/os-release", "usr/lib/os-release"}) {
      auto t = out_.view->readFile(p, 64 * 1024);
      if (t.ok()) {
        text = *t;
        break;
      }
    }
    json os = json::object();
    if (!config_.platform.architecture.empty()) os["architecture"] = oci::normalize(config_.platform).architecture;
    if (text.empty()) {
      r_.section("os") = os;
      r_.skipStep("os", "no /etc/os-release or /usr/lib/os-release in the image");
      return {};
    }
    auto kv = os::parseOsRelease(text);
    for (const char* k : {"ID", "ID_LIKE", "VERSION_ID", "VERSION_CODENAME", "PRETTY_NAME"})
      if (kv.count(k)) os[util::toLower(k)] = kv[k];
    r_.section("os") = os;
    return {};
  }

  const std::string& reference_;
  const AuditOptions& opts_;
  AuditResult& out_;
  report::Report& r_;
  oci::ImageRef ref_;
  std::shared_ptr<oci::ImageSource> source_;  // shared with the view's hash filler
  oci::Descriptor top_, manifestDesc_;
  oci::Manifest manifest_;
  oci::ImageConfig config_;
  std::set<std::string> unverifiable_;  // digests already reported as unverifiable
};

}  // namespace

oci::ScanOptions layerScanOptions(const AuditOptions& opts) {
  oci::ScanOptions so;
  so.capture = [capture = opts.capture](const std::string& p) {
    return std::max({defaultCapture(p), packagesCaptureLimit(p), capture ? capture(p) : uint64_t(0)});
  };
  // A shared result serves every image with the layer: every file is hashed once, so no audit
  // reading it has to fetch the layer again for a hash the guess left out.
  if (opts.sharedScans) so.hashes = [](const std::string&) { return unsigned(oci::kHashSha256 | oci::kHashMd5); };
  else so.hashes = packagesHashPolicy;
  return so;
}

Result<bool> prepareLayer(const registry::Reference& repo, const oci::Descriptor& layer, const AuditOptions& opts) {
  std::string dir = opts.registry.noCache ? "" : (opts.registry.cacheDir.empty() ? registry::defaultCacheDir() : opts.registry.cacheDir);
  if (auto cached = oci::loadScan(dir, layer.digest); cached && static_cast<int64_t>(cached->compressedSize) == layer.size) {
    if (opts.sharedScans && !opts.sharedScans->load(layer)) {
      opts.sharedScans->store(layer, *cached);
      if (!opts.sharedScans->has(layer)) return Error::Io("layer " + layer.digest.str() + ": its result could not be shared");
    }
    return true;
  }
  if (opts.sharedScans && opts.sharedScans->load(layer)) return true;
  registry::Client client(repo, opts.registry);
  KDK_TRY_ASSIGN(auto stream, client.blob(layer));
  oci::ScanOptions so = layerScanOptions(opts);
  so.digestAlgorithm = layer.digest.algorithm;
  oci::LayerScan scan = oci::scanLayer(*stream, so);
  std::string what = repo.registry + "/" + repo.repository + "@" + layer.digest.str();
  if (scan.error) return Error{scan.error->code, "layer " + what + ": " + scan.error->message};
  if (scan.digestHex != layer.digest.encoded || static_cast<int64_t>(scan.compressedSize) != layer.size)
    return Error::Corrupt("layer " + what + ": the bytes do not match the descriptor");
  oci::storeScan(dir, layer.digest, scan);
  if (opts.sharedScans) {
    opts.sharedScans->store(layer, scan);
    // Others wait for this result: not being able to share it is a failure here, to be retried.
    if (!opts.sharedScans->has(layer)) return Error::Io("layer " + what + ": its result could not be shared");
  }
  return false;
}

AuditResult auditImage(const std::string& reference, const AuditOptions& opts) {
  AuditResult out;
  Pipeline(reference, opts, out).run();
  return out;
}

}  // namespace kernodeck::audit
