// The audit pipeline. Steps, in order: resolve, manifest, config, layers, os.
// A step that cannot complete stops the pipeline (later steps stay
// not_reached); problems that do not stop it (a digest mismatch, a hostile tar
// entry, a leaked credential) are findings, all collected.
#include "kernodeck/audit/image_audit.h"

#include <set>
#include <thread>

#include "kernodeck/audit/gpu_support.h"
#include "kernodeck/audit/layer_checks.h"
#include "kernodeck/audit/layer_reader.h"
#include "kernodeck/audit/packages_audit.h"
#include "kernodeck/audit/result_cache.h"
#include "kernodeck/gpu/gpu_code_scan.h"
#include "kernodeck/oci/image_ref.h"
#include "kernodeck/oci/index_walk.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/oci/scan_cache.h"
#include "kernodeck/oci/schema_check.h"
#include "kernodeck/oci/source.h"
#include "kernodeck/os/os_release.h"
#include "kernodeck/python/torch_build.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/stage_profile.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::audit {

using nlohmann::json;
using report::Severity;

namespace {

// What one image's view may hold, all layers together (each layer is bounded by ScanOptions too):
// entries (about 250 bytes each) and the captured files the analysers read.
constexpr uint64_t kMaxImageEntries = uint64_t(1) << 23;
constexpr uint64_t kMaxImageCapturedBytes = uint64_t(2) << 30;

std::string hashHex(const std::string& alg, const std::string& bytes) {
  util::Hasher h(alg);
  h.update(bytes);
  return h.hex();
}

class Pipeline {
 public:
  Pipeline(const std::string& reference, const AuditOptions& opts, AuditResult& out)
      : reference_(reference), opts_(opts), out_(out), r_(out.report) {}

  void run() {
    r_.subject()["reference"] = reference_;
    auto resolved = oci::resolveImageRef(reference_);
    if (resolved.ok() && !resolved->note.empty())
      r_.add("reference.transport", Severity::Info, resolved->note,
             {{"transport", oci::toString(resolved->ref.transport)}});
    if (resolved.ok() && resolved->ref.transport == oci::Transport::RootFs) {
      runDir(resolved->ref);
      return;
    }
    r_.declareSteps({"resolve", "manifest", "config", "layers", "os", "os-packages", "python"});
    r_.runStep("resolve", [&]() -> Status {
      if (!resolved.ok()) return resolved.error();
      ref_ = resolved->ref;
      r_.subject()["transport"] = oci::toString(ref_.transport);
      if (ref_.transport == oci::Transport::Registry) {
        KDK_TRY_ASSIGN(registry::Reference rr, registry::parseReference(ref_.registryName()));
        r_.subject()["registry"] = rr.registry;
        r_.subject()["repository"] = rr.repository;
        r_.subject()["normalized"] = rr.str();
        registryRef_ = rr;
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
    std::optional<StoredResult> stored;
    if (!key.empty()) {
      util::StageTimer t(util::Stage::Cache);
      stored = loadResult(key);
    }
    if (stored) {
      replay(*stored, key);
      return;
    }
    size_t findingsBefore = r_.findings().size();
    nlohmann::json sectionsBefore = r_.sections();
    r_.runStep("layers", [&] { return walkLayers(); });
    {
      util::StageTimer t(util::Stage::Packages);
      r_.runStep("os", [&] { return detectOs(); });
      runPackages();
    }
    if (!key.empty() && !r_.failed()) {
      util::StageTimer t(util::Stage::Cache);
      storeResult(key, added(findingsBefore, sectionsBefore));
    }
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
    ctx.imageDigest = manifestDigest_;
    ctx.requirementsFiles = opts_.requirementsFiles;
    ctx.pythonTargets = opts_.pythonTargets;
    ctx.lock = opts_.lock;
    ctx.gpuCode.files = gpuCodeFiles_;
    for (const auto& l : manifest_.layers) ctx.gpuCode.layerDigests.push_back(l.digest.str());
    out_.expectation = auditPackages(*out_.view, ctx, r_);
  }

  // The result cache's entry for this image (result_cache.h); empty when it is not to be used.
  std::string resultKey() const {
    std::string dir = source_->scanCacheDir();
    if (dir.empty() || !opts_.reuseResults || opts_.capture || source_->synthetic()) return {};
    return resultPath(dir, manifestDesc_.digest, manifest_.config.digest, opts_);
  }

  // What the steps after "config" added to the report since it held `findingsBefore` findings
  // and `sectionsBefore`.
  StoredResult added(size_t findingsBefore, const nlohmann::json& sectionsBefore) const {
    StoredResult s;
    for (const char* name : kResultSteps)
      for (const auto& st : r_.steps())
        if (st.name == name) s.steps.push_back(st);
    for (auto it = r_.sections().begin(); it != r_.sections().end(); ++it)
      if (!sectionsBefore.contains(it.key())) s.sections[it.key()] = it.value();
    s.findings.assign(r_.findings().begin() + static_cast<std::ptrdiff_t>(findingsBefore), r_.findings().end());
    s.expectation = out_.expectation;
    return s;
  }

  // Puts a stored outcome into the report in place of running its steps.
  void replay(StoredResult& stored, const std::string& path) {
    for (const auto& st : stored.steps) r_.restoreStep(st.name, st.status, st.error);
    for (auto it = stored.sections.begin(); it != stored.sections.end(); ++it) r_.section(it.key()) = it.value();
    for (auto& f : stored.findings) r_.add(std::move(f));
    out_.expectation = std::move(stored.expectation);
    r_.subject()["cached_result"] = path.substr(path.rfind('/') + 1, 64);
  }

  // An OCI artifact (a manifest whose config is not an image config: the empty descriptor or
  // the artifact's own type): its blobs are verified, nothing is unpacked or run.
  void runArtifact() {
    std::string type = !manifest_.artifactType.empty() ? manifest_.artifactType : manifest_.config.mediaType;
    r_.subject()["artifact_type"] = type;
    checkTag();  // a tag moves whatever it names
    std::string why = "an OCI artifact (" + type + "), not a container image";
    r_.skipStep("config", why);
    r_.runStep("layers", [&]() -> Status {
      json blobs = json::array();
      std::vector<std::pair<const oci::Descriptor*, std::string>> all = {{&manifest_.config, "config"}};
      for (size_t i = 0; i < manifest_.layers.size(); ++i)
        all.push_back({&manifest_.layers[i], "layer " + std::to_string(i)});
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
      r_.add("blob.missing", Severity::Error,
             what + " " + d.digest.str() + " could not be read: " + scan.error->message, ev);
      return false;
    }
    if (static_cast<int64_t>(scan.compressedSize) != d.size) {
      r_.add("blob.digest.mismatch", Severity::Error,
             what + " " + d.digest.str() + " has " + std::to_string(scan.compressedSize) +
                 " bytes, its descriptor says " + std::to_string(d.size),
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
    if (!util::checkJsonNesting(bytes, "").ok()) return;  // the parser reports it
    json j = json::parse(bytes, nullptr, false);
    if (j.is_discarded()) return;  // the parser reports it
    for (const auto& issue : check(j, d.mediaType))
      r_.add(code, issue.warning ? Severity::Warning : Severity::Error,
             (issue.field.empty() ? std::string("document") : issue.field) + ": " + issue.message,
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
    KDK_TRY_ASSIGN(std::string bytes,
                   oci::readAll(*stream, oci::kMaxManifestBytes, std::string(what) + " " + d.digest.str()));
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
    if (kind == oci::DocKind::Index)
      checkSchema(bytes, "index.schema.invalid", top_, oci::checkIndexSchema);
    else if (!source_->synthetic())
      checkSchema(bytes, "manifest.schema.invalid", top_, oci::checkManifestSchema);
    if (kind == oci::DocKind::Index) KDK_TRY_STATUS(chooseFromIndex(bytes));
    auto m = oci::parseManifest(bytes);
    if (!m.ok()) return Error::Invalid("manifest " + manifestDesc_.digest.str() + ": " + m.error().message);
    manifest_ = *m;
    manifestDigest_ = source_->synthetic() ? std::string() : manifestDesc_.digest.str();
    if (source_->synthetic())
      r_.subject()["manifest_digest"] = nullptr;
    else
      r_.subject()["manifest_digest"] = manifestDigest_;
    r_.subject()["media_type"] = manifest_.mediaType;
    if (!source_->tag().empty()) r_.subject()["tag"] = source_->tag();
    return {};
  }

  // Follows the index `bytes` (top_) to the manifest for the platform asked for, as containerd
  // does (oci/index_walk.h); leaves that manifest's bytes in `bytes`.
  Status chooseFromIndex(std::string& bytes) {
    oci::Platform want = opts_.platform ? *opts_.platform : oci::hostPlatform();
    indexDigest_ = top_.digest.str();
    r_.subject()["index_digest"] = indexDigest_;
    // A platform-less entry's config is read here to learn its platform; readConfig takes those
    // bytes, so the blob is fetched and verified (and a mismatch reported) once.
    auto read = [&](const oci::Descriptor& d, const std::string& what) {
      auto bytes = readVerified(d, what.c_str());
      if (bytes.ok() && what == "config") configRead_ = {d.digest.str(), *bytes};
      return bytes;
    };
    auto nested = [&](const oci::Descriptor& d, const std::string& b) {
      checkSchema(b, "index.schema.invalid", d, oci::checkIndexSchema);
    };
    auto choice = oci::chooseManifest(top_, bytes, want, read, nested);
    if (!choice.ok()) return choice.error();
    json chain = json::array();
    for (const auto& d : choice->chain) chain.push_back(d.digest.str());
    r_.subject()["index_chain"] = chain;
    manifestDesc_ = choice->manifest;
    bytes = std::move(choice->bytes);
    checkSchema(bytes, "manifest.schema.invalid", manifestDesc_, oci::checkManifestSchema);
    if (choice->platformFrom == oci::PlatformFrom::Index) {
      platformFromIndex_ = true;
      r_.subject()["platform"] = choice->platform.str();
    } else {
      r_.add("index.platform.missing", Severity::Info,
             "index entry " + manifestDesc_.digest.str() + " (in index " + choice->chain.back().digest.str() +
                 ") names no platform; no entry there names a matching one, so it was followed as containerd "
                 "follows the first such entry, and the platform, " +
                 choice->platform.str() + ", was learnt from its config",
             {{"digest", manifestDesc_.digest.str()},
              {"index", choice->chain.back().digest.str()},
              {"platform_from", "config"},
              {"platform", choice->platform.str()}});
    }
    return {};
  }

  Status readConfig() {
    std::string bytes;
    if (configRead_ && configRead_->first == manifest_.config.digest.str()) {
      bytes = std::move(configRead_->second);
    } else {
      KDK_TRY_ASSIGN(bytes, readVerified(manifest_.config, "config"));
    }
    configRead_.reset();
    checkSchema(bytes, "config.schema.invalid", manifest_.config, [](const json& j, std::string_view mt) {
      auto issues = oci::checkConfigSchema(j);
      // Docker leaves out an empty diff_ids (a zero-layer image), which containerd and podman load.
      if (mt == oci::media::kDockerConfig)
        std::erase_if(issues, [](const oci::SchemaIssue& i) { return i.field == "rootfs.diff_ids"; });
      return issues;
    });
    auto c = oci::parseConfig(bytes);
    if (!c.ok()) return Error::Invalid("config " + manifest_.config.digest.str() + ": " + c.error().message);
    config_ = *c;
    if (!platformFromIndex_) r_.subject()["platform"] = oci::normalize(config_.platform).str();
    oci::Platform want = opts_.platform ? oci::normalize(*opts_.platform) : oci::hostPlatform();
    oci::Platform have = oci::normalize(config_.platform);
    if (have.os != want.os || have.architecture != want.architecture)
      r_.add("image.platform.mismatch", Severity::Warning, "image is built for " + have.str() + ", not " + want.str(),
             {{"digest", manifest_.config.digest.str()}});
    if (config_.diffIds.size() != manifest_.layers.size())
      return Error::Invalid("config lists " + std::to_string(config_.diffIds.size()) + " diff_ids for " +
                            std::to_string(manifest_.layers.size()) + " layers");
    describeImage();
    checkTag();
    if (manifest_.layers.empty())
      r_.add("image.layers.empty", Severity::Info,
             "the image has no layers: its filesystem is empty (valid: containerd and podman run it, as they run a "
             "FROM scratch image with only metadata)",
             {{"digest", manifest_.config.digest.str()}});
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
      std::string d = !indexDigest_.empty() ? indexDigest_ : manifestDesc_.digest.str();
      if (ref_.transport == oci::Transport::OciLayout)
        pin = "pin it as oci:" + ref_.path + "@" + d;
      else if (ref_.transport == oci::Transport::Registry && registryRef_)
        pin = "pin it as " + registryRef_->registry + "/" + registryRef_->repository + "@" + d;
      else
        pin = "pin digest " + d;
    }
    std::string what = source_->tag().empty() ? "no tag or digest" : "tag '" + source_->tag() + "'";
    r_.add("image.tag.mutable", Severity::Warning, "the reference names " + what + ", which can move; " + pin,
           {{"digest", source_->synthetic() ? manifest_.config.digest.str() : manifestDesc_.digest.str()}});
  }

  Status walkLayers() {
    auto view = std::make_unique<oci::LayeredView>();
    oci::ScanOptions so = layerScanOptions(opts_);
    // Read the layers in parallel (bounded) and apply each, in order, as soon as it and those
    // before it are read.
    unsigned workers =
        opts_.parallelLayers ? opts_.parallelLayers : std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
    // Shared results, like the local ones, only for content-addressed sources.
    bool shareable = opts_.sharedScans && ref_.transport == oci::Transport::Registry;
    json layers = json::array();
    std::optional<Error> firstError;
    uint64_t captured = 0;  // bytes of files kept in the view, all layers together
    readLayers(*source_, manifest_.layers, so, workers, shareable ? opts_.sharedScans.get() : nullptr,
               [&](size_t i, LayerRead& read) {
                 const oci::Descriptor& d = manifest_.layers[i];
                 std::string layerName = std::to_string(i) + ":" + d.digest.str();
                 json lj = {{"index", i}, {"digest", d.digest.str()}, {"media_type", d.mediaType}, {"size", d.size}};
                 oci::Compression declared = oci::layerCompression(d.mediaType);
                 bool encrypted = oci::encryptedLayer(d.mediaType);
                 if (encrypted)
                   r_.add("layer.encrypted", Severity::Warning,
                          "layer is encrypted (" + d.mediaType +
                              "): its blob is verified, but its files cannot be inspected, so "
                              "the filesystem view lacks them",
                          {{"layer", layerName}, {"digest", d.digest.str()}});
                 else if (declared == oci::Compression::Unknown)
                   r_.add("layer.mediatype.unknown", Severity::Warning,
                          "layer media type '" + d.mediaType + "' is not a known layer type", {{"layer", layerName}});
                 if (!d.digest.verifiable()) unverifiable(d, "layer " + layerName);
                 if (!read.sharedIgnored.empty())
                   r_.add("cache.shared.ignored", Severity::Info,
                          "the shared result " + read.sharedEntry + " of layer " + layerName + " was ignored (" +
                              read.sharedIgnored + "); the layer was analysed here",
                          {{"layer", layerName},
                           {"digest", d.digest.str()},
                           {"entry", read.sharedEntry},
                           {"reason", read.sharedIgnored}});
                 if (read.openError) {
                   r_.add("blob.missing", Severity::Error, read.openError->message,
                          {{"layer", layerName}, {"digest", d.digest.str()}});
                   if (!firstError) firstError = read.openError;
                   layers.push_back(lj);
                   return;
                 }
                 oci::LayerScan& scan = *read.scan;
                 verifyLayer(r_, *source_, config_.diffIds, unverifiable_, d, i, layerName, scan);
                 if (encrypted) {
                   lj["encrypted"] = true;
                   if (scan.error && !firstError) firstError = scan.error->context("layer " + layerName);
                   layers.push_back(lj);
                   return;
                 }
                 scanFindings(r_, declared, scan, layerName);
                 for (const auto& e : scan.entries) captured += e.content ? e.content->size() : 0;
                 if (captured > kMaxImageCapturedBytes || view->size() + scan.entries.size() > kMaxImageEntries) {
                   if (!firstError)
                     firstError = Error::Unsupported(
                         "layer " + layerName + " takes the image past " + std::to_string(kMaxImageEntries) +
                         " entries or " + util::humanBytes(kMaxImageCapturedBytes) +
                         " of files to read (package databases, metadata): the view stops before it");
                   layers.push_back(lj);
                   return;
                 }
                 for (const auto& e : scan.entries)
                   if (e.content && gpu::isGpuCodeBytes(*e.content)) gpuCodeFiles_.push_back(e.path);
                 std::vector<oci::UnsafeEntry> refused, suspicious = scan.suspicious;
                 {
                   util::StageTimer t(util::Stage::View);
                   view->apply(scan.entries, static_cast<int>(i), refused, suspicious);
                 }
                 viewFindings(r_, refused, suspicious, layerName);
                 lj["uncompressed_size"] = scan.uncompressedSize;
                 lj["diff_id"] = "sha256:" + scan.diffIdHex;
                 lj["compression"] = oci::toString(scan.detected);
                 lj["files"] = scan.fileCount;
                 if (scan.error) {
                   lj["error"] = scan.error->message;
                   if (!firstError) firstError = scan.error->context("layer " + layerName);
                 }
                 layers.push_back(lj);  // the view holds what is needed now: readLayers drops the scan
               });
    r_.section("layers") = layers;
    view->setHashFiller(
        [source = source_, descs = manifest_.layers, so](int layer, const std::set<std::string>& paths) {
          return rehashLayer(*source, descs.at(static_cast<size_t>(layer)), so, paths);
        });
    json fs = {{"entries", view->size()}};
    r_.section("filesystem") = fs;
    out_.view = std::move(view);
    if (firstError) return *firstError;
    return {};
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
  std::vector<std::string> gpuCodeFiles_;  // entries whose GPU code the walk kept (gpu/gpu_code_scan.h)
  // What the report's subject says, kept typed for the steps that use it.
  std::optional<registry::Reference> registryRef_;                 // a registry image's reference
  std::string indexDigest_;                                        // the index the manifest was chosen from
  std::string manifestDigest_;                                     // empty for a legacy archive's synthesised manifest
  bool platformFromIndex_ = false;                                 // the index entry named the platform
  std::optional<std::pair<std::string, std::string>> configRead_;  // digest, bytes: read by chooseFromIndex
};

}  // namespace

AuditResult auditImage(const std::string& reference, const AuditOptions& opts) {
  AuditResult out;
  Pipeline(reference, opts, out).run();
  if (!out.report.failed()) judgeGpuSupport(out.report, out.expectation, opts.gpus);
  if (!opts.exceptions.empty()) report::applyExceptions(out.report, opts.exceptions, report::todayUtc());
  return out;
}

}  // namespace kernodeck::audit
