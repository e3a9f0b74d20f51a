// Built without LibTorch: the resume check cannot run, and says so.
#include "kernodeck/probe/resume.h"

namespace kernodeck::probe {

report::Report resumeCheck(const ResumeOptions&) {
  report::Report r("resume check");
  r.declareSteps({"train"});
  r.runStep("train", [] { return Status(Error::Unsupported("the resume check needs LibTorch; this kernodeck is built without it")); });
  return r;
}

int resumeContinue(const std::string&, int, unsigned, const std::string&) { return 3; }

report::Report resumeInspect(const std::string&) {
  report::Report r("resume inspect");
  r.declareSteps({"read"});
  r.runStep("read", [] { return Status(Error::Unsupported("reading checkpoints needs LibTorch; this kernodeck is built without it")); });
  return r;
}

}  // namespace kernodeck::probe
