#include "kernodeck/audit/gpu_support.h"

#include "kernodeck/gpu/gpu_code_judge.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::audit {

using report::Severity;

void judgeGpuSupport(report::Report& r, const gpu::Expectation& e, const std::vector<gpu::GpuTarget>& gpus) {
  if (e.gpuCode.empty()) {
    for (const auto& g : gpus)
      r.add("gpu.arch.unknown", Severity::Info,
            "--gpu " + g.name + ": no library with GPU code was read in the image, so nothing was judged against it",
            {{"gpu", g.name}, {"capability", g.capability}});
    return;
  }
  nlohmann::json section = {{"libraries", e.gpuCode.size()}, {"generations", gpu::generationSupport(e.gpuCode)}};
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& g : gpus) {
    std::string who = g.name == g.capability ? g.capability : g.name + " (" + g.capability + ")";
    auto verdicts = gpu::judgeGpuCode(e.gpuCode, g.capability);
    for (const auto& v : verdicts) {
      if (v.fit != gpu::CodeFit::None && v.fit != gpu::CodeFit::Ptx) continue;
      std::map<std::string, std::string> ev = {{"library", v.library},
                                               {"gpu", g.name},
                                               {"capability", g.capability},
                                               {"sass", util::join(v.sass, ",")},
                                               {"ptx", util::join(v.ptx, ",")}};
      if (!v.layer.empty()) ev["layer"] = v.layer;
      if (v.fit == gpu::CodeFit::None)
        r.add("gpu.arch.unsupported", Severity::Error, gpu::explainVerdict(v, who, g.capability), ev);
      else
        r.add("gpu.arch.ptx_only", Severity::Warning, gpu::explainVerdict(v, who, g.capability), ev);
    }
    targets.push_back({{"gpu", g.name}, {"capability", g.capability}, {"fit", gpu::toString(gpu::worstFit(verdicts))}});
  }
  if (!gpus.empty()) section["targets"] = targets;
  r.section("gpu_support") = section;
}

}  // namespace kernodeck::audit
