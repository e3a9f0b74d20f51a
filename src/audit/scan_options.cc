// What the audit keeps of a layer's files while the layer is walked once: the files its
// analysers read (os-release, the package databases, the caller's own), the bytes of a
// cuda-compat libcuda.so its note is read from, the GPU code of ELF files (what their fatbins
// hold, never the files), and which files are hashed how.
#include <algorithm>

#include "kernodeck/audit/image_audit.h"
#include "kernodeck/audit/packages_audit.h"
#include "kernodeck/gpu/fwd_note_capture.h"
#include "kernodeck/gpu/gpu_code_scan.h"

namespace kernodeck::audit {

namespace {

uint64_t defaultCapture(const std::string& p) {
  return p == "etc/os-release" || p == "usr/lib/os-release" ? 64 * 1024 : 0;
}

// A cuda-compat libcuda.so: only the bytes its .note.cuda.fwd_compatibility is read from are kept
// (gpu/fwd_note_capture.h), not the whole library (tens to hundreds of MiB).
class CompatNoteCapture : public oci::PartialCapture {
 public:
  explicit CompatNoteCapture(uint64_t size) : keeper_(size) {}
  void feed(const char* data, size_t n) override { keeper_.feed(data, n); }
  std::string finish() override { return keeper_.finish(); }

 private:
  gpu::FwdNoteKeeper keeper_;
};

bool compatLibrary(const std::string& p) {
  return p.starts_with("usr/local/cuda") && p.find("/compat/libcuda.so.") != std::string::npos;
}

// Any other file: if it is ELF, what its fatbins hold (gpu/gpu_code_scan.h), kept only when there
// is GPU code (or a malformed fatbin); any other file is let go after its first four bytes.
class GpuCodeCapture : public oci::PartialCapture {
 public:
  explicit GpuCodeCapture(uint64_t size) : scanner_(size) {}
  void feed(const char* data, size_t n) override {
    if (scanner_.elf()) scanner_.feed(data, n);
  }
  std::string finish() override {
    gpu::FileGpuCode code = scanner_.finish();
    return code.empty() ? std::string() : gpu::encodeGpuCode(code);
  }

 private:
  gpu::GpuCodeScanner scanner_;
};

// The smallest ELF file with a fatbin nvcc writes is kilobytes; smaller files are not looked at.
constexpr uint64_t kMinGpuCodeFile = 1024;

}  // namespace

oci::ScanOptions layerScanOptions(const AuditOptions& opts) {
  oci::ScanOptions so;
  so.capture = [capture = opts.capture](const std::string& p) {
    return std::max({defaultCapture(p), packagesCaptureLimit(p), capture ? capture(p) : uint64_t(0)});
  };
  // A file kept whole (a package database, the caller's) is never a partial capture.
  so.partial = [capture = so.capture, gpuCode = opts.gpuCode](const std::string& p,
                                                             uint64_t size) -> std::unique_ptr<oci::PartialCapture> {
    if (compatLibrary(p)) return std::make_unique<CompatNoteCapture>(size);
    if (gpuCode && size >= kMinGpuCodeFile && capture(p) == 0) return std::make_unique<GpuCodeCapture>(size);
    return nullptr;
  };
  // A shared result serves every image with the layer: every file is hashed once, so no audit
  // reading it has to fetch the layer again for a hash the guess left out.
  if (opts.sharedScans)
    so.hashes = [](const std::string&) { return unsigned(oci::kHashSha256 | oci::kHashMd5); };
  else
    so.hashes = packagesHashPolicy;
  // The capture and hash policies are fixed by the analysis version; the name tells them apart.
  so.policy = std::string("audit; hashes: ") + (opts.sharedScans ? "sha256+md5 of every file" : "by place") +
              (opts.capture ? "; captures: the caller's too" : "") + "; compat libcuda: the note's bytes" +
              (opts.gpuCode ? "; ELF files: their fatbins' GPU code (v1)" : "");
  return so;
}

}  // namespace kernodeck::audit
