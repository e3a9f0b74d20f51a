// libFuzzer targets for every parser of untrusted input. One source, one
// target per FUZZ_<NAME> definition (see tests/fuzz/CMakeLists.txt); seed
// corpora live in tests/fuzz/corpus/<name>/. Run them with scripts/fuzz.
#include <archive.h>
#include <archive_entry.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/attest/cosign_layout.h"
#include "kernodeck/attest/dsse.h"
#include "kernodeck/attest/predicate.h"
#include "kernodeck/attest/statement.h"
#include "kernodeck/gpu/expectation.h"
#include "kernodeck/gpu/fwd_note_capture.h"
#include "kernodeck/gpu/requirement.h"
#include "kernodeck/hook/command_line.h"
#include "kernodeck/hook/container_check.h"
#include "kernodeck/hook/hook_config.h"
#include "kernodeck/hook/yaml_document.h"
#include "kernodeck/host/host_facts.h"
#include "kernodeck/host/host_record.h"
#include "kernodeck/oci/fs_view.h"
#include "kernodeck/oci/image_ref.h"
#include "kernodeck/oci/index_walk.h"
#include "kernodeck/oci/layer_scan.h"
#include "kernodeck/oci/manifest.h"
#include "kernodeck/oci/runtime_spec.h"
#include "kernodeck/oci/scan_cache.h"
#include "kernodeck/os/apk.h"
#include "kernodeck/os/conda.h"
#include "kernodeck/os/dpkg.h"
#include "kernodeck/os/os_release.h"
#include "kernodeck/python/marker.h"
#include "kernodeck/python/metadata.h"
#include "kernodeck/python/pins.h"
#include "kernodeck/python/record_check.h"
#include "kernodeck/python/requirement.h"
#include "kernodeck/python/specifier.h"
#include "kernodeck/python/torch_build.h"
#include "kernodeck/record/criterion.h"
#include "kernodeck/record/documents.h"
#include "kernodeck/record/pylock.h"
#include "kernodeck/record/record.h"
#include "kernodeck/record/requirements_file.h"
#include "kernodeck/record/resume_check.h"
#include "kernodeck/record/tensor_file.h"
#include "kernodeck/registry/auth.h"
#include "kernodeck/registry/reference.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/report/report_doc.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/process.h"

using namespace kernodeck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string s(in);
#if defined(FUZZ_MANIFEST)
  (void)oci::parseManifest(in);
  (void)oci::parseIndex(in);
  (void)oci::parseConfig(in);
  (void)oci::detectKind(in);
  // The index walk over a store where every descriptor names these same bytes: nested as deep as
  // the bound allows, each entry's config read, never a loop.
  oci::Descriptor top{oci::media::kOciIndex, oci::Digest{"sha256", std::string(64, 'a')}, 0, {}, {}, {}};
  (void)oci::chooseManifest(top, s, oci::Platform{"linux", "amd64", "", ""},
                            [&](const oci::Descriptor&, const std::string&) -> Result<std::string> { return s; });
#elif defined(FUZZ_REFERRERS)
  // Everything a registry writer can attach to an image: referrers indexes, artifact and
  // cosign attestation manifests, DSSE envelopes, in-toto statements and report predicates.
  (void)registry::parseReferrers(in, "", "index");
  (void)registry::parseReferrers(in, "application/vnd.kernodeck.report.v1+json", "index");
  (void)registry::parseArtifact(in, "artifact");
  oci::Descriptor layer{attest::kDsseMediaType, oci::Digest{"sha256", std::string(64, 'a')}, 2, {}};
  (void)attest::mergeCosignAttestation(in, layer, attest::kReportPredicateType);
  (void)attest::isKernodeckStatement(in);
  if (auto e = attest::parseEnvelope(in); e.ok()) (void)attest::parseStatement(e->payload);
  if (auto st = attest::parseStatement(in); st.ok()) (void)attest::parsePredicate(st->predicate);
  (void)attest::parsePredicate(nlohmann::json::parse(in, nullptr, false));
#elif defined(FUZZ_REFERENCE)
  (void)registry::parseReference(in);
  (void)oci::parseImageRef(in);
  (void)oci::parseDigest(in);
#elif defined(FUZZ_WWW_AUTHENTICATE)
  (void)registry::parseWwwAuthenticate(in);
  (void)report::redactText(in);
#elif defined(FUZZ_TAR)
  oci::MemoryStream stream(s);
  oci::ScanOptions o;
  o.capture = [](const std::string&) -> uint64_t { return 4096; };
  oci::LayerScan scan = oci::scanLayer(stream, o);
  oci::LayeredView view;
  std::vector<oci::UnsafeEntry> unsafe;
  view.apply(scan.entries, 0, unsafe);
  view.apply(scan.entries, 1, unsafe);
  for (const auto& e : scan.entries) {
    (void)view.resolve(e.path, true);
    (void)view.readFile(e.path, 4096);
  }
#elif defined(FUZZ_METADATA)
  (void)python::parseCoreMetadata(in);
  (void)python::parseRequiresTxt(in);
  (void)python::parseRecord(in);
  (void)python::parseWheel(in);
  (void)python::parseDirectUrl(in);
  (void)python::parseTorchVersionPy(in);
  bool hex = false;
  (void)python::decodeRecordDigest("sha256", s, &hex);
  (void)python::classifyRecordQuirk("../../../bin/x", false, &s, "sha256", std::string(64, '0'));
#elif defined(FUZZ_REQUIREMENTS)
  (void)python::Requirement::parse(in);
  auto rf = python::loadRequirements("r.txt", [&](const std::string& p) -> std::optional<std::string> {
    if (p == "r.txt" || p == "base.txt") return s;
    return std::nullopt;
  });
  (void)rf;
#elif defined(FUZZ_REPLAY_REQUIREMENTS)
  // The replay's refusing reader: the input is the top file and every file it includes.
  record::RequirementsScanOptions o;
  o.read = [&](const std::string& rel) -> Result<std::optional<std::string> > {
    if (rel == "a.txt" || rel == "sub/b.txt") return std::optional<std::string>(s);
    return Error::NotFound("absent");
  };
  (void)record::scanRequirements("requirements.txt", s, o);
#elif defined(FUZZ_PYLOCK)
  // A lock that reads must write back to one that reads.
  auto lock = record::parsePylock(in);
  if (lock.ok() && !record::parsePylock(record::writePylock(*lock)).ok()) __builtin_trap();
  (void)record::parseTomlSubset(in);
#elif defined(FUZZ_CUDA_FWD_NOTE)
  // A cuda-compat libcuda.so's note, over the whole file and over the bytes an audit keeps as the
  // file streams by in blocks: the kept bytes never give a note the whole file does not.
  auto whole = gpu::readFwdCompatNote(
      [&](uint64_t off, size_t len) { return off >= s.size() ? std::string() : s.substr(off, len); });
  size_t block = size ? 1 + static_cast<unsigned char>(in[0]) * 37 : 1;
  gpu::FwdNoteKeeper keeper(size);
  for (size_t at = 0; at < size; at += block) keeper.feed(s.data() + at, std::min(block, size - at));
  auto kept = gpu::readKeptFwdCompatNote(keeper.finish());
  if (kept.ok() && kept->has_value() && !(whole.ok() && whole->has_value() && (*whole)->toJson() == (*kept)->toJson()))
    __builtin_trap();
  (void)gpu::readKeptFwdCompatNote(in);
#elif defined(FUZZ_VERSION)
  size_t cut = in.find('\n');
  std::string_view a = in.substr(0, cut), b = cut == std::string_view::npos ? "" : in.substr(cut + 1);
  auto v = python::Version::parse(a);
  auto spec = python::SpecifierSet::parse(b);
  if (v.ok()) {
    (void)v->str();
    if (spec.ok()) (void)spec->contains(*v, true);
  }
  auto m = python::Marker::parse(in);
  if (m.ok()) (void)m->evaluate(python::imageMarkerEnv("3.11.2", "amd64"), "x");
#elif defined(FUZZ_NVIDIA_REQUIRE)
  auto r = gpu::parseRequirement(in);
  if (r.ok()) (void)gpu::evaluate(*r, {"12.4", "550.54.15", "9.0", "nvidia"});
  (void)gpu::parseVisibleDevices(std::string(in));
  (void)gpu::parseDriverCapabilities(std::string(in));
#elif defined(FUZZ_PROCFS)
  (void)host::parseNvidiaVersion(in);
  (void)host::parseGpuInformation(in);
  (void)host::parseProcDevices(in);
  (void)host::parseMigMinors(in);
  (void)host::parseKfdProperties(in);
  (void)os::parseOsRelease(in);
  (void)os::parseDpkgStatus(in, true);
  (void)os::parseMd5sums(in);
  (void)os::parseApkInstalled(in);
  (void)os::decodeApkChecksum(in);
  os::PackageDatabase conda;
  (void)os::parseCondaMeta(in, "opt/conda", conda);
  (void)hook::parseGroupFile(in);
#elif defined(FUZZ_OCI_STATE)
  (void)oci::parseRuntimeState(in);
  (void)oci::parseContainerConfig(in, "/bundle");
  (void)gpu::parseExpectation(in);
  {  // the hook's command line (one argument per line) and its CDI / config.json edits
    std::vector<std::string> args;
    for (size_t a = 0, b; a <= s.size(); a = b + 1) {
      b = s.find('\n', a);
      if (b == std::string::npos) b = s.size();
      args.push_back(s.substr(a, b - a));
    }
    (void)hook::parseCommandLine(args);
    auto doc = nlohmann::ordered_json::parse(s, nullptr, false);
    auto entry = hook::makeHookEntry("/usr/local/bin/kernodeck-hook", {"--policy", "enforce"});
    if (!doc.is_discarded() && entry.ok()) {
      (void)hook::addHookToCdiSpec(doc, *entry);
      (void)hook::addHookToRuntimeConfig(doc, *entry);
    }
  }
#elif defined(FUZZ_TENSORS)
  (void)record::parseNpy(in);
  (void)record::parseSafetensors(in);
  (void)record::parseIds(in, "ids.csv");
  (void)record::parseIds(in, "ids.json");
#elif defined(FUZZ_PT)
  // A whole .pt zip when the input starts like one; otherwise the input is data.pkl, stored in a
  // zip beside storages "0" to "7" (so the pickle machine is reached past the zip CRCs).
  if (in.rfind("PK", 0) == 0) {
    (void)record::parseTorchZip(in);
  } else {
    std::string zip(in.size() + 8192, '\0');
    size_t used = 0;
    struct archive* a = archive_write_new();
    archive_write_set_format_zip(a);
    archive_write_zip_set_compression_store(a);
    if (archive_write_open_memory(a, zip.data(), zip.size(), &used) == ARCHIVE_OK) {
      // data.pkl, then storages "0" to "7" of 64 bytes each.
      const std::string storage(64, '\x01');
      for (int k = -1; k < 8; ++k) {
        std::string name = k < 0 ? "archive/data.pkl" : "archive/data/" + std::to_string(k);
        std::string_view data = k < 0 ? in : std::string_view(storage);
        struct archive_entry* e = archive_entry_new();
        archive_entry_set_pathname(e, name.c_str());
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
        if (archive_write_header(a, e) == ARCHIVE_OK) (void)archive_write_data(a, data.data(), data.size());
        archive_entry_free(e);
      }
      archive_write_close(a);
      (void)record::parseTorchZip(std::string_view(zip.data(), used));
    }
    archive_write_free(a);
  }
#elif defined(FUZZ_RECORD_REFERENCE)
  // Any JSON at all through the reference parser and what reads its result (criterion, diff).
  auto j = util::parseJsonText(in, "reference.json");
  if (j.ok()) {
    auto ref = record::parseReference(*j);
    if (ref.ok())
      for (const auto& c : ref->result.criteria) (void)record::parseCriterion(c.first);
    auto d = record::parseDiffInput(*j);
    if (d.ok()) (void)record::diffRecords(*d, *d);
  }
#elif defined(FUZZ_RECORD_REPORT)
  auto j = util::parseJsonText(in, "report.json");
  if (j.ok()) (void)record::parseReportDoc(*j);
#elif defined(FUZZ_REPORT_DOC)
  // kernodeck.report/v1 read back, and the verdict its summary gives under each --fail-on.
  auto j = util::parseJsonText(in, "report.json");
  if (j.ok()) {
    auto d = report::parseReportDoc(*j);
    for (int failOn = -1; failOn <= 2; ++failOn) {
      std::string v = report::verdictOf(report::summaryOf(*j), failOn);
      if (v != "pass" && v != "fail" && v != "incomplete") __builtin_trap();
      if (d.ok() && d->summary.complete != report::summaryOf(*j).complete) __builtin_trap();
    }
  }
#elif defined(FUZZ_HOST_RECORD)
  // kernodeck.host/v1: whatever reads is written and read back to the same JSON.
  auto rec = host::parseHostRecord(in);
  if (rec.ok()) {
    nlohmann::json once = rec->toJson();
    auto back = host::parseHostRecordJson(once);
    if (!back.ok() || back->toJson() != once) __builtin_trap();
  }
#elif defined(FUZZ_EXPECTATION)
  // kernodeck.expect/v1: whatever reads is written and read back to the same JSON.
  auto e = gpu::parseExpectation(in);
  if (e.ok()) {
    nlohmann::json once = e->toJson();
    auto back = gpu::expectationFromJson(once);
    if (!back.ok() || back->toJson() != once) __builtin_trap();
  }
#elif defined(FUZZ_STATEMENT)
  // An attached report as a registry serves it to anyone: the DSSE envelope, the in-toto
  // statement (what is read is written and read back) and Kernodeck's predicate.
  (void)util::parseEnvelope(in);
  auto st = attest::parseStatement(in);
  if (st.ok()) {
    auto back = attest::parseStatement(attest::serializeStatement(*st));
    if (!back.ok() || back->predicateType != st->predicateType || back->subjects.size() != st->subjects.size())
      __builtin_trap();
    (void)attest::parsePredicate(st->predicate);
  }
#elif defined(FUZZ_SCAN_CACHE)
  // A layer's scan as the local cache or a shared store (--cache-repo, writable by whoever can
  // push) holds it: what decodes is encoded and decoded again.
  static const oci::Digest layer = oci::parseDigest("sha256:" + std::string(64, '0')).value();
  auto scan = oci::decodeScan(in, layer);
  if (scan && !oci::decodeScan(oci::encodeScan(layer, *scan), layer)) __builtin_trap();
#elif defined(FUZZ_RECORD_PROCEDURE)
  auto j = util::parseJsonText(in, "procedure.json");
  if (j.ok()) {
    auto p = record::parseProcedure(*j);
    if (p.ok()) (void)record::parseProcedure(record::toJson(*p)).value();  // what is written reads back
  }
#elif defined(FUZZ_DOSSIER_MANIFEST)
  (void)record::parseDossierManifest(in);
#elif defined(FUZZ_RESUME_COMMAND)
  // A `resume check --cmd` template, and the same bytes as a checkpoint to scan for keys.
  auto words = record::splitCommandWords(in);
  if (words.ok()) {
    // What the display quoting writes splits back into the same words (control characters,
    // which it writes as $'...', aside).
    bool control = false;
    for (const auto& w : *words)
      for (char c : w) control |= static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    auto back = record::splitCommandWords(util::quoteCommand(*words));
    if (!control && (!back.ok() || *back != *words)) __builtin_trap();
    auto t = record::CommandTemplate::fromWords(*words, record::resumePlaceholders());
    if (t.ok() && t->expand({{"out", "/w o"}}).size() != words->size()) __builtin_trap();
  }
  (void)record::assessCheckpoint(nullptr, in);
#elif defined(FUZZ_YAML)
  // YAML CDI specs: whatever parses must be written and read back as the same values, and the
  // hook's edit of it must not crash.
  auto doc = hook::parseYaml(in);
  if (doc.ok()) {
    auto text = hook::emitYaml(*doc);
    if (!text.ok()) __builtin_trap();
    auto back = hook::parseYaml(*text);
    if (!back.ok() || back->dump() != doc->dump()) __builtin_trap();
    auto e = hook::makeHookEntry("/usr/local/bin/kernodeck-hook", {"--policy", "enforce"});
    if (e.ok()) {
      auto edited = hook::addHookToCdiSpec(*doc, *e);
      if (edited.ok() && !hook::emitYaml(*edited).ok()) __builtin_trap();
    }
  }
#else
#error "define one FUZZ_<TARGET>"
#endif
  return 0;
}
