// LibTorch is loaded on demand. Its code lives in the plugin libkernodeck_torch.so
// (torch_compute.cc, resume_torch.cc, pt_torch.cc); the commands that need it
// (probe, resume, sample check of .pt files) load it with dlopen at first use.
// Every other command, audit included, starts without paying for LibTorch's
// load (hundreds of milliseconds and of megabytes of resident memory).
// Without the plugin (a build without LibTorch) they say so instead of computing.
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "kernodeck/probe/compute.h"
#include "kernodeck/probe/resume.h"
#include "kernodeck/record/tensor_file.h"

namespace kernodeck::probe {

namespace {

struct Plugin {
  void* handle = nullptr;
  std::string error;
};

const Plugin& plugin() {
  static Plugin p;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("KERNODECK_TORCH_PLUGIN"); env && *env) candidates.push_back(env);
    char self[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
      std::string dir(self, static_cast<size_t>(n));
      dir = dir.substr(0, dir.rfind('/'));
      candidates.push_back(dir + "/libkernodeck_torch.so");
      candidates.push_back(dir + "/../lib/kernodeck/libkernodeck_torch.so");
    }
    candidates.push_back("/usr/local/lib/kernodeck/libkernodeck_torch.so");
    for (const auto& c : candidates) {
      if (::access(c.c_str(), R_OK) != 0) continue;
      p.handle = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (p.handle) return;
      const char* e = ::dlerror();
      p.error = c + ": " + (e ? e : "cannot be loaded");
    }
    if (p.error.empty()) p.error = "this kernodeck has no LibTorch plugin (built without LibTorch, or libkernodeck_torch.so is not beside it)";
  });
  return p;
}

template <class F>
F* symbol(const char* name) {
  const Plugin& p = plugin();
  return p.handle ? reinterpret_cast<F*>(::dlsym(p.handle, name)) : nullptr;
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
  r.runStep("train", [] { return Status(Error::Unsupported("the resume check needs LibTorch: " + plugin().error)); });
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
  r.runStep("read", [] { return Status(Error::Unsupported("reading checkpoints needs LibTorch: " + plugin().error)); });
  return r;
}

}  // namespace kernodeck::probe

namespace kernodeck::record {

Result<std::vector<Tensor>> parsePt(std::string_view bytes) {
  using Out = std::optional<Result<std::vector<Tensor>>>;
  if (auto* f = probe::symbol<void(const std::string_view*, Out*)>("kdk_parse_pt")) {
    Out out;
    f(&bytes, &out);
    if (out) return std::move(*out);
  }
  return Error::Unsupported(".pt files need LibTorch (" + probe::plugin().error + "); use .npy or .safetensors");
}

}  // namespace kernodeck::record
