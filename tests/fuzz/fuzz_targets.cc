// libFuzzer targets for every parser of untrusted input. One source compiled once into one
// program, kdk_fuzz; each target is a link to it named fuzz_<name> (tests/fuzz/CMakeLists.txt),
// and the name it is started under picks the target. Seed corpora live in
// tests/fuzz/corpus/<name>/. Run them with scripts/fuzz.
#include <archive.h>
#include <archive_entry.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/attest/cosign_layout.h"
#include "kernodeck/audit/exceptions_file.h"
#include "kernodeck/attest/dsse.h"
#include "kernodeck/attest/predicate.h"
#include "kernodeck/attest/statement.h"
#include "kernodeck/gpu/expectation.h"
#include "kernodeck/gpu/fatbin.h"
#include "kernodeck/gpu/fwd_note_capture.h"
#include "kernodeck/gpu/gpu_code_scan.h"
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
#include "kernodeck/python/environment.h"
#include "kernodeck/python/marker.h"
#include "kernodeck/python/metadata.h"
#include "kernodeck/python/pins.h"
#include "kernodeck/python/record_check.h"
#include "kernodeck/python/requirement.h"
#include "kernodeck/python/specifier.h"
#include "kernodeck/python/torch_build.h"
#include "kernodeck/record/criterion.h"
#include "kernodeck/record/documents.h"
#include "kernodeck/python/lock_check.h"
#include "kernodeck/python/pylock.h"
#include "kernodeck/record/record.h"
#include "kernodeck/record/requirements_file.h"
#include "kernodeck/record/resume_check.h"
#include "kernodeck/record/tensor_file.h"
#include "kernodeck/registry/auth.h"
#include "kernodeck/registry/reference.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/report/exceptions.h"
#include "kernodeck/report/formats.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/report/report_doc.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/process.h"

using namespace kernodeck;

namespace {

// Every target, by the name after fuzz_ in the program's file name.
constexpr const char* kTargets[] = {"manifest",
                                    "referrers",
                                    "reference",
                                    "www_authenticate",
                                    "tar",
                                    "metadata",
                                    "requirements",
                                    "replay_requirements",
                                    "pylock",
                                    "cuda_fwd_note",
                                    "fatbin",
                                    "version",
                                    "nvidia_require",
                                    "procfs",
                                    "oci_state",
                                    "tensors",
                                    "pt",
                                    "record_reference",
                                    "record_report",
                                    "report_doc",
                                    "host_record",
                                    "expectation",
                                    "statement",
                                    "scan_cache",
                                    "record_procedure",
                                    "dossier_manifest",
                                    "resume_command",
                                    "yaml",
                                    "scanners",
                                    "exceptions"};
std::string_view gTarget;

}  // namespace

// The target is the program's own name (fuzz_<name>, a link to kdk_fuzz); any other name is
// refused, naming the targets.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  std::string_view self = *argc > 0 ? (*argv)[0] : "";
  self = self.substr(self.rfind('/') + 1);
  for (const char* t : kTargets)
    if (self == std::string("fuzz_") + t) gTarget = t;
  if (gTarget.empty()) {
    std::fprintf(stderr, "kdk_fuzz: start it as fuzz_<target> (a link to it), not '%.*s'; targets:",
                 static_cast<int>(self.size()), self.data());
    for (const char* t : kTargets) std::fprintf(stderr, " %s", t);
    std::fprintf(stderr, "\n");
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string s(in);
  const std::string_view t = gTarget;
  if (t == "manifest") {
    (void)oci::parseManifest(in);
    (void)oci::parseIndex(in);
    (void)oci::parseConfig(in);
    (void)oci::detectKind(in);
    // The index walk over a store where every descriptor names these same bytes: nested as deep as
    // the bound allows, each entry's config read, never a loop.
    oci::Descriptor top{oci::media::kOciIndex, oci::Digest{"sha256", std::string(64, 'a')}, 0, {}, {}, {}};
    (void)oci::chooseManifest(top, s, oci::Platform{"linux", "amd64", "", ""},
                              [&](const oci::Descriptor&, const std::string&) -> Result<std::string> { return s; });
  } else if (t == "referrers") {
    // Everything a registry writer can attach to an image: referrers indexes, artifact and
    // cosign attestation manifests, DSSE envelopes, in-toto statements and report predicates.
    (void)registry::parseReferrers(in, "", "index");
    (void)registry::parseReferrers(in, "application/vnd.kernodeck.report.v1+json", "index");
    (void)registry::parseArtifact(in, "artifact");
    oci::Descriptor layer;
    layer.mediaType = attest::kDsseMediaType;
    layer.digest = oci::Digest{"sha256", std::string(64, 'a')};
    layer.size = 2;
    (void)attest::mergeCosignAttestation(in, layer, attest::kReportPredicateType);
    (void)attest::isKernodeckStatement(in);
    if (auto e = attest::parseEnvelope(in); e.ok()) (void)attest::parseStatement(e->payload);
    if (auto st = attest::parseStatement(in); st.ok()) (void)attest::parsePredicate(st->predicate);
    (void)attest::parsePredicate(nlohmann::json::parse(in, nullptr, false));
  } else if (t == "reference") {
    (void)registry::parseReference(in);
    (void)oci::parseImageRef(in);
    (void)oci::parseDigest(in);
  } else if (t == "www_authenticate") {
    (void)registry::parseWwwAuthenticate(in);
    (void)report::redactText(in);
  } else if (t == "tar") {
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
  } else if (t == "metadata") {
    (void)python::parseCoreMetadata(in);
    (void)python::parseRequiresTxt(in);
    (void)python::parseRecord(in);
    (void)python::parseWheel(in);
    (void)python::parseDirectUrl(in);
    (void)python::parseTorchVersionPy(in);
    bool hex = false;
    (void)python::decodeRecordDigest("sha256", s, &hex);
    (void)python::classifyRecordQuirk("../../../bin/x", false, &s, "sha256", std::string(64, '0'));
  } else if (t == "requirements") {
    (void)python::Requirement::parse(in);
    auto rf = python::loadRequirements("r.txt", [&](const std::string& p) -> std::optional<std::string> {
      if (p == "r.txt" || p == "base.txt") return s;
      return std::nullopt;
    });
    (void)rf;
  } else if (t == "replay_requirements") {
    // The replay's refusing reader: the input is the top file and every file it includes.
    record::RequirementsScanOptions o;
    o.read = [&](const std::string& rel) -> Result<std::optional<std::string> > {
      if (rel == "a.txt" || rel == "sub/b.txt") return std::optional<std::string>(s);
      return Error::NotFound("absent");
    };
    (void)record::scanRequirements("requirements.txt", s, o);
  } else if (t == "pylock") {
    // A lock that reads must write back to one that reads.
    auto lock = python::parsePylock(in);
    if (lock.ok() && !python::parsePylock(python::writePylock(*lock)).ok()) __builtin_trap();
    (void)python::parseToml(in);
    // What `audit --lock` evaluates of it: requires-python, environments, markers with the
    // extras and dependency groups chosen; a selection never names a package the lock lacks.
    if (lock.ok()) {
      python::LockTarget target;
      target.markers = python::imageMarkerEnv("3.11.2", "amd64");
      for (auto groups : {std::vector<std::string>{}, lock->extras, lock->dependencyGroups}) {
        target.groups = groups;
        auto sel = python::selectLocked(*lock, target);
        if (sel.packages.size() > lock->packages.size() || (!sel.applies && !sel.packages.empty())) __builtin_trap();
      }
    }
    // The same bytes as a requirements file read as a lock (audit --lock requirements.txt).
    auto read = [&](const std::string& p) { return p == "r.txt" ? std::optional<std::string>(in) : std::nullopt; };
    (void)python::lockFromRequirements(python::loadRequirements("r.txt", read));
  } else if (t == "cuda_fwd_note") {
    // A cuda-compat libcuda.so's note, over the whole file and over the bytes an audit keeps as the
    // file streams by in blocks: the kept bytes never give a note the whole file does not.
    auto whole = gpu::readFwdCompatNote(
        [&](uint64_t off, size_t len) { return off >= s.size() ? std::string() : s.substr(off, len); });
    size_t block = size ? 1 + static_cast<unsigned char>(in[0]) * 37 : 1;
    gpu::FwdNoteKeeper keeper(size);
    for (size_t at = 0; at < size; at += block) keeper.feed(s.data() + at, std::min(block, size - at));
    auto kept = gpu::readKeptFwdCompatNote(keeper.finish());
    if (kept.ok() && kept->has_value() &&
        !(whole.ok() && whole->has_value() && (*whole)->toJson() == (*kept)->toJson()))
      __builtin_trap();
    (void)gpu::readKeptFwdCompatNote(in);
  } else if (t == "fatbin") {
    // Fatbin containers and the ELF scanner over them: fed whole or in blocks of any size, they read
    // the same, and what is kept decodes to what was read. The input is read as an ELF file and,
    // behind an ELF header, as the bytes of one.
    size_t block = size ? 1 + static_cast<unsigned char>(in[size - 1]) * 13 : 1;
    auto whole = gpu::readFatbins(in);
    for (const auto& c : whole) {
      gpu::FatbinReader r(c.offset, size);
      for (size_t at = 0; at < size; at += block) r.feed(at, in.substr(at, block));
      auto part = r.finish();
      if (part.problem != c.problem || part.entries != c.entries || part.entryCount != c.entryCount) __builtin_trap();
    }
    std::string elf = std::string("\x7f" "ELF\x02\x01\x01", 7) + std::string(57, '\0') + s;
    for (const std::string* file : {&s, &elf}) {
      gpu::FileGpuCode one = gpu::scanGpuCode(*file);
      gpu::GpuCodeScanner scanner(file->size());
      for (size_t at = 0; at < file->size(); at += block)
        scanner.feed(file->data() + at, std::min(block, file->size() - at));
      gpu::FileGpuCode cut = scanner.finish();
      // How many containers are open at once depends on where the blocks end: past the bound
      // (a problem saying so) the two may differ.
      bool bounded = false;
      for (const auto& p : one.problems) bounded = bounded || p.find("overlap") != std::string::npos;
      for (const auto& p : cut.problems) bounded = bounded || p.find("overlap") != std::string::npos;
      if (!bounded && (one.sass != cut.sass || one.ptx != cut.ptx || one.problems != cut.problems)) __builtin_trap();
      auto back = gpu::decodeGpuCode(gpu::encodeGpuCode(one));
      if (!back.ok() || back->sass != one.sass || back->ptx != one.ptx) __builtin_trap();
    }
    (void)gpu::decodeGpuCode(in);
  } else if (t == "version") {
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
  } else if (t == "nvidia_require") {
    auto r = gpu::parseRequirement(in);
    if (r.ok()) (void)gpu::evaluate(*r, {"12.4", "550.54.15", "9.0", "nvidia"});
    (void)gpu::parseVisibleDevices(std::string(in));
    (void)gpu::parseDriverCapabilities(std::string(in));
  } else if (t == "procfs") {
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
  } else if (t == "oci_state") {
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
  } else if (t == "tensors") {
    (void)record::parseNpy(in);
    (void)record::parseSafetensors(in);
    (void)record::parseIds(in, "ids.csv");
    (void)record::parseIds(in, "ids.json");
  } else if (t == "pt") {
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
  } else if (t == "record_reference") {
    // Any JSON at all through the reference parser and what reads its result (criterion, diff).
    auto j = util::parseJsonText(in, "reference.json");
    if (j.ok()) {
      auto ref = record::parseReference(*j);
      if (ref.ok())
        for (const auto& c : ref->result.criteria) (void)record::parseCriterion(c.first);
      auto d = record::parseDiffInput(*j);
      if (d.ok()) (void)record::diffRecords(*d, *d);
    }
  } else if (t == "record_report") {
    auto j = util::parseJsonText(in, "report.json");
    if (j.ok()) (void)record::parseReportDoc(*j);
  } else if (t == "report_doc") {
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
  } else if (t == "host_record") {
    // kernodeck.host/v1: whatever reads is written and read back to the same JSON.
    auto rec = host::parseHostRecord(in);
    if (rec.ok()) {
      nlohmann::json once = rec->toJson();
      auto back = host::parseHostRecordJson(once);
      if (!back.ok() || back->toJson() != once) __builtin_trap();
    }
  } else if (t == "expectation") {
    // kernodeck.expect/v1: whatever reads is written and read back to the same JSON.
    auto e = gpu::parseExpectation(in);
    if (e.ok()) {
      nlohmann::json once = e->toJson();
      auto back = gpu::expectationFromJson(once);
      if (!back.ok() || back->toJson() != once) __builtin_trap();
    }
  } else if (t == "statement") {
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
  } else if (t == "scan_cache") {
    // A layer's scan as the local cache or a shared store (--cache-repo, writable by whoever can
    // push) holds it: what decodes is encoded and decoded again.
    static const oci::Digest layer = oci::parseDigest("sha256:" + std::string(64, '0')).value();
    auto scan = oci::decodeScan(in, layer);
    if (scan && !oci::decodeScan(oci::encodeScan(layer, *scan), layer)) __builtin_trap();
  } else if (t == "record_procedure") {
    auto j = util::parseJsonText(in, "procedure.json");
    if (j.ok()) {
      auto p = record::parseProcedure(*j);
      if (p.ok()) (void)record::parseProcedure(record::toJson(*p)).value();  // what is written reads back
    }
  } else if (t == "dossier_manifest") {
    (void)record::parseDossierManifest(in);
  } else if (t == "resume_command") {
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
  } else if (t == "scanners") {
    // The hand scanners that replaced std::regex on text an image or replayed code supplies (issue
    // 39 section 12). Short inputs: each scanner agrees with the regex it replaced. Long ones (the
    // input repeated to 256 KiB, past libFuzzer's -max_len): no crash, no hang, whatever the text.
    if (size <= 2048) {
      static const std::regex descrRe(R"('descr'\s*:\s*'([<>|=])([fiub])(\d+)')");
      static const std::regex fortranRe(R"('fortran_order'\s*:\s*(True|False))");
      static const std::regex shapeRe(R"('shape'\s*:\s*\(([^)]*)\))");
      static const std::regex mappingRe(R"(MAPPING\s*(?::[^=]*)?=\s*\{\s*'[^']*'\s*:\s*'([^']+)')");
      static const std::regex finderRe(R"(^import (__editable___[A-Za-z0-9_]+_finder);)");
      std::smatch m;
      record::NpyHeader h = record::scanNpyHeader(s);
      bool d = std::regex_search(s, m, descrRe);
      if (d != h.descr.has_value() || (d && (h.descr->order != m[1].str()[0] || h.descr->kind != m[2].str()[0] ||
                                             h.descr->size != m[3].str())))
        __builtin_trap();
      bool f = std::regex_search(s, m, fortranRe);
      if (f != h.fortran.has_value() || (f && *h.fortran != (m[1].str() == "True"))) __builtin_trap();
      bool sh = std::regex_search(s, m, shapeRe);
      if (sh != h.shape.has_value() || (sh && *h.shape != m[1].str())) __builtin_trap();
      bool mp = std::regex_search(s, m, mappingRe);
      if (python::editableFinderMapping(s) != (mp ? m[1].str() : "")) __builtin_trap();
      bool fi = std::regex_search(s, m, finderRe);
      if (python::editableFinderImport(s) != (fi ? m[1].str() : "")) __builtin_trap();
    }
    std::string big = s;
    while (!s.empty() && big.size() < (256u << 10)) big += s;
    for (const std::string* text : {&s, &big}) {
      (void)record::scanNpyHeader(*text);
      std::string npy = std::string("\x93NUMPY\x02\x00", 8);
      uint32_t n = static_cast<uint32_t>(text->size());
      for (int i = 0; i < 4; ++i) npy.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
      (void)record::parseNpy(npy + *text);
      (void)report::redactText(*text);
      (void)python::parseTorchVersionPy(*text);
      (void)python::editableFinderImport(*text);
      (void)python::editableFinderMapping(*text);
      (void)record::parseCriterion(*text);
      record::RequirementsScanOptions o;
      o.read = [](const std::string&) -> Result<std::optional<std::string> > { return Error::NotFound("absent"); };
      (void)record::scanRequirements("requirements.txt", *text, o);
    }
  } else if (t == "yaml") {
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
  } else if (t == "exceptions") {
    // kernodeck.exceptions/v1 (YAML or JSON): whatever reads is written and read back as the same
    // entries, and applying it to a report with findings and summarising it must not crash.
    auto f = audit::parseExceptionsText(in, "fuzz.yaml", "2026-12-03");
    if (f.ok()) {
      auto back = audit::parseExceptionsText(report::exceptionsJson(*f).dump(), "fuzz.json", "2026-12-03");
      if (!back.ok() || report::exceptionsJson(*back) != report::exceptionsJson(*f)) __builtin_trap();
      report::Report r("audit");
      r.subject()["reference"] = "registry.example.com/team/model:1.0";
      r.subject()["registry"] = "registry.example.com";
      r.subject()["repository"] = "team/model";
      r.add("python.pin.mismatch", report::Severity::Error, "m", {{"path", "/app/requirements.txt:3"}, {"package", "x"}});
      r.add("blob.digest.mismatch", report::Severity::Error, "m", {{"layer", "sha256:00"}});
      report::applyExceptions(r, {*f}, "2026-12-03");
      nlohmann::json j = r.toJson();
      (void)report::exceptionsSummaryText(report::exceptionsSummary(j));
      (void)report::toMarkdown(r, 2);
      (void)report::toSarif(r);
    }
  } else {
    __builtin_trap();  // LLVMFuzzerInitialize took only a listed name
  }
  return 0;
}
