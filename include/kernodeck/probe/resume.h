// The training-resume check: a small seeded model trained N steps straight
// through, against k steps, a checkpoint (model, optimizer state, RNG state,
// step counter, LR schedule), and a restore in a fresh process continuing to N.
// Then each piece of state is left out in turn to show which ones the
// trajectory needs. CPU only, LibTorch.
#pragma once

#include <string>

#include "kernodeck/report/report.h"

namespace kernodeck::probe {

struct ResumeOptions {
  int steps = 20, at = 10;
  double atol = 0;  // tolerance on losses and final parameters, declared before the run
  unsigned seed = 1234;
  std::string self;  // this binary, to continue in a fresh process
};

report::Report resumeCheck(const ResumeOptions& o);
// `kernodeck resume _continue`: the fresh process. Writes {"losses","params"} JSON to `out`.
int resumeContinue(const std::string& checkpoint, int steps, unsigned seed, const std::string& out);
// What state a checkpoint holds and what a resume needs that is missing.
report::Report resumeInspect(const std::string& checkpoint);

}  // namespace kernodeck::probe
