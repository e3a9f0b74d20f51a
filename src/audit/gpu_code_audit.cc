// See gpu_code_audit.h.
#include "kernodeck/audit/gpu_code_audit.h"

#include <algorithm>
#include <set>

#include "kernodeck/gpu/fatbin.h"
#include "kernodeck/gpu/gpu_code_scan.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::audit {

using nlohmann::json;
using report::Severity;

namespace {

// torch's own libraries in its package's lib/ (libtorch_cuda.so, libc10_cuda.so,
// libtorch_cuda_linalg.so, ...), not the NVIDIA libraries older wheels bundled beside them.
bool torchOwnLibrary(const std::string& path, const std::string& torchLocation) {
  if (torchLocation.empty()) return false;
  std::string dir = torchLocation + "/torch/lib/";
  if (!path.starts_with(dir) || path.find('/', dir.size()) != std::string::npos) return false;
  std::string_view base = std::string_view(path).substr(dir.size());
  return base.starts_with("libtorch") || base.starts_with("libc10") || base.starts_with("libcaffe2");
}

}  // namespace

std::vector<std::string> torchArchList(const std::vector<std::string>& sass, const std::vector<std::string>& ptx) {
  std::vector<std::string> s = sass, p = ptx;
  std::sort(s.begin(), s.end(), gpu::archNameLess);
  std::sort(p.begin(), p.end(), gpu::archNameLess);
  s.erase(std::unique(s.begin(), s.end()), s.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  s.insert(s.end(), p.begin(), p.end());
  return s;
}

void auditGpuCode(const oci::FsView& v, const GpuCodeContext& ctx, gpu::Expectation& e, report::Report& r) {
  std::set<std::string> seen;
  std::vector<gpu::GpuCode> libraries;
  std::vector<std::string> torchSass, torchPtx;
  json section = json::array();
  for (const auto& file : ctx.files) {
    // Where the entry landed (a symlink among its parents is followed as the view applied it).
    auto resolved = v.resolve(file, false);
    if (!resolved.ok() || !seen.insert(*resolved).second) continue;
    auto info = v.info(*resolved);
    if (!info || info->kind != oci::EntryKind::File) continue;
    auto kept = v.readResolved(*resolved, 1 << 20);
    if (!kept.ok() || !gpu::isGpuCodeBytes(*kept)) continue;  // replaced by a later layer
    auto code = gpu::decodeGpuCode(*kept);
    if (!code.ok()) continue;
    std::string layer = info->layer >= 0 && static_cast<size_t>(info->layer) < ctx.layerDigests.size()
                            ? ctx.layerDigests[static_cast<size_t>(info->layer)]
                            : "";
    std::string path = "/" + *resolved;
    if (!code->problems.empty())
      r.add("gpu.fatbin.malformed", Severity::Warning,
            path + " carries malformed GPU code (fatbins): " + util::join(code->problems, "; ") +
                "; what could not be read is not listed",
            {{"path", path}, {"layer", layer}});
    if (code->sass.empty() && code->ptx.empty()) continue;
    if (torchOwnLibrary(*resolved, ctx.torchLocation)) {
      torchSass.insert(torchSass.end(), code->sass.begin(), code->sass.end());
      torchPtx.insert(torchPtx.end(), code->ptx.begin(), code->ptx.end());
    }
    section.push_back({{"library", path},
                       {"layer", layer},
                       {"sass", code->sass},
                       {"ptx", code->ptx},
                       {"compressed", code->compressed},
                       {"fatbins", code->containers},
                       {"entries", code->entries}});
    libraries.push_back({path, layer, code->sass, code->ptx, code->compressed});
  }
  if (libraries.empty()) return;
  std::sort(libraries.begin(), libraries.end(),
            [](const gpu::GpuCode& a, const gpu::GpuCode& b) { return a.library < b.library; });
  std::sort(section.begin(), section.end(),
            [](const json& a, const json& b) { return a["library"].get<std::string>() < b["library"].get<std::string>(); });
  e.gpuCode = std::move(libraries);
  if (!torchSass.empty() || !torchPtx.empty()) e.torchArchList = torchArchList(torchSass, torchPtx);
  r.section("gpu_code") = {{"libraries", section}};
}

}  // namespace kernodeck::audit
