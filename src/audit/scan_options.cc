// What the audit keeps of a layer's files while the layer is walked once: the files its
// analysers read (os-release, the package databases, the caller's own), the bytes of a
// cuda-compat libcuda.so its note is read from, and which files are hashed how.
#include <algorithm>

#include "kernodeck/audit/image_audit.h"
#include "kernodeck/audit/packages_audit.h"
#include "kernodeck/gpu/fwd_note_capture.h"

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

std::unique_ptr<oci::PartialCapture> compatNoteCapture(const std::string& p, uint64_t size) {
  if (p.starts_with("usr/local/cuda") && p.find("/compat/libcuda.so.") != std::string::npos)
    return std::make_unique<CompatNoteCapture>(size);
  return nullptr;
}

}  // namespace

oci::ScanOptions layerScanOptions(const AuditOptions& opts) {
  oci::ScanOptions so;
  so.capture = [capture = opts.capture](const std::string& p) {
    return std::max({defaultCapture(p), packagesCaptureLimit(p), capture ? capture(p) : uint64_t(0)});
  };
  so.partial = compatNoteCapture;
  // A shared result serves every image with the layer: every file is hashed once, so no audit
  // reading it has to fetch the layer again for a hash the guess left out.
  if (opts.sharedScans)
    so.hashes = [](const std::string&) { return unsigned(oci::kHashSha256 | oci::kHashMd5); };
  else
    so.hashes = packagesHashPolicy;
  // The capture and hash policies are fixed by the analysis version; the name tells them apart.
  so.policy = std::string("audit; hashes: ") + (opts.sharedScans ? "sha256+md5 of every file" : "by place") +
              (opts.capture ? "; captures: the caller's too" : "") + "; compat libcuda: the note's bytes";
  return so;
}

}  // namespace kernodeck::audit
