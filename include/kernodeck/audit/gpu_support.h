// Which GPUs an image's GPU code runs on: `audit --gpu` (a finding per library that cannot run on
// a GPU asked for, or only through PTX JIT) and, always when the image has GPU code, the report's
// `gpu_support` section (per GPU generation, gpu/gpu_code_judge.h). Judged from the audit's
// Expectation::gpuCode after the analysis, so a replayed (cached) outcome is judged the same way.
#pragma once

#include <vector>

#include "kernodeck/gpu/expectation.h"
#include "kernodeck/gpu/gpu_models.h"
#include "kernodeck/report/report.h"

namespace kernodeck::audit {

void judgeGpuSupport(report::Report& r, const gpu::Expectation& e, const std::vector<gpu::GpuTarget>& gpus);

}  // namespace kernodeck::audit
