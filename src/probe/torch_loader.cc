// The probe's and resume's side of the LibTorch plugin's interface (libtorch/abi.h).
// Without a usable plugin (a build without LibTorch, another ABI version) they say
// so instead of computing.
#include "kernodeck/libtorch/plugin.h"
#include "kernodeck/probe/compute.h"
#include "kernodeck/probe/resume.h"

namespace kernodeck::probe {

namespace {

void appendTo(void* ctx, const char* s, size_t n) { static_cast<std::string*>(ctx)->assign(s, n); }

void addRow(void* ctx, const libtorch::ComputeRow* c) {
  static_cast<std::vector<ComputeResult>*>(ctx)->push_back(ComputeResult{
      c->device, c->device_name, c->ok != 0, c->error, c->max_abs_diff, c->max_rel_diff, c->checksum, c->finite != 0});
}

}  // namespace

LibtorchInfo libtorchInfo() {
  LibtorchInfo info;
  const libtorch::PluginAbi* abi = libtorch::plugin();
  if (!abi) {
    info.unavailable = libtorch::pluginError();
    return info;
  }
  libtorch::TorchInfo t;
  abi->torch_info(&t, &info.version, appendTo);
  info.available = true;
  info.cudaBuild = t.cuda_build != 0;
  info.hipBuild = t.hip_build != 0;
  info.cudaAvailable = t.cuda_available != 0;
  info.cudaDevices = t.cuda_devices;
  return info;
}

std::vector<ComputeResult> runCompute(const std::vector<std::string>& devices, const Tolerance& tol, int n,
                                      unsigned seed) {
  std::vector<ComputeResult> out;
  const libtorch::PluginAbi* abi = libtorch::plugin();
  if (!abi) return out;
  std::vector<const char*> names;
  for (const auto& d : devices) names.push_back(d.c_str());
  abi->compute(names.data(), names.size(), tol.atol, tol.rtol, n, seed, &out, addRow);
  return out;
}

report::Report resumeCheck(const ResumeOptions& o) {
  report::Report r("resume check");
  auto abi = libtorch::reportEntries(libtorch::plugin());
  if (abi) {
    libtorch::ResumeArgs args{o.steps, o.at, o.atol, o.seed, o.self.c_str()};
    (*abi)->resume_check(&args, &r);
    return r;
  }
  r.declareSteps({"train"});
  r.runStep("train",
            [&] { return Status(Error::Unsupported("the resume check needs LibTorch: " + abi.error().message)); });
  return r;
}

int resumeContinue(const std::string& checkpoint, int steps, unsigned seed, const std::string& out) {
  const libtorch::PluginAbi* abi = libtorch::plugin();
  if (abi && abi->resume_continue) return abi->resume_continue(checkpoint.c_str(), steps, seed, out.c_str());
  return 3;
}

report::Report resumeInspect(const std::string& checkpoint) {
  report::Report r("resume inspect");
  auto abi = libtorch::reportEntries(libtorch::plugin());
  if (abi) {
    (*abi)->resume_inspect(checkpoint.c_str(), &r);
    return r;
  }
  r.declareSteps({"read"});
  r.runStep("read",
            [&] { return Status(Error::Unsupported("reading checkpoints needs LibTorch: " + abi.error().message)); });
  return r;
}

}  // namespace kernodeck::probe
