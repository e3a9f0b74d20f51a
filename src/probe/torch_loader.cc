// The probe's and resume's entry points into the LibTorch plugin (see
// libtorch/plugin.h). Without the plugin (a build without LibTorch) they say so
// instead of computing.
#include <optional>

#include "kernodeck/probe/compute.h"
#include "kernodeck/probe/resume.h"
#include "kernodeck/libtorch/plugin.h"

namespace kernodeck::probe {

namespace {

template <class F>
F* symbol(const char* name) {
  return reinterpret_cast<F*>(libtorch::pluginSymbol(name));
}

}  // namespace

LibtorchInfo libtorchInfo() {
  LibtorchInfo info;
  if (auto* f = symbol<void(LibtorchInfo*)>("kdk_torch_info")) f(&info);
  return info;
}

std::vector<ComputeResult> runCompute(const std::vector<std::string>& devices, const Tolerance& tol, int n, unsigned seed) {
  std::vector<ComputeResult> out;
  if (auto* f = symbol<void(const std::vector<std::string>*, const Tolerance*, int, unsigned, std::vector<ComputeResult>*)>("kdk_torch_compute"))
    f(&devices, &tol, n, seed, &out);
  return out;
}

report::Report resumeCheck(const ResumeOptions& o) {
  report::Report r("resume check");
  if (auto* f = symbol<void(const ResumeOptions*, report::Report*)>("kdk_resume_check")) {
    f(&o, &r);
    return r;
  }
  r.declareSteps({"train"});
  r.runStep("train", [] { return Status(Error::Unsupported("the resume check needs LibTorch: " + libtorch::pluginError())); });
  return r;
}

int resumeContinue(const std::string& checkpoint, int steps, unsigned seed, const std::string& out) {
  if (auto* f = symbol<int(const std::string*, int, unsigned, const std::string*)>("kdk_resume_continue"))
    return f(&checkpoint, steps, seed, &out);
  return 3;
}

report::Report resumeInspect(const std::string& checkpoint) {
  report::Report r("resume inspect");
  if (auto* f = symbol<void(const std::string*, report::Report*)>("kdk_resume_inspect")) {
    f(&checkpoint, &r);
    return r;
  }
  r.declareSteps({"read"});
  r.runStep("read", [] { return Status(Error::Unsupported("reading checkpoints needs LibTorch: " + libtorch::pluginError())); });
  return r;
}

}  // namespace kernodeck::probe
