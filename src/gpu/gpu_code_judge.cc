#include "kernodeck/gpu/gpu_code_judge.h"

#include <algorithm>
#include <set>

#include "kernodeck/gpu/cuda_compat.h"
#include "kernodeck/gpu/gpu_models.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::gpu {

namespace {

// The libraries of a generation's capabilities that cannot run, at most this many named.
constexpr size_t kNamedPerGeneration = 20;

}  // namespace

const char* toString(CodeFit f) {
  switch (f) {
    case CodeFit::Sass: return "sass";
    case CodeFit::Ptx: return "ptx";
    case CodeFit::None: return "none";
    case CodeFit::Unknown: return "unknown";
  }
  return "unknown";
}

CodeFit entryFits(std::string_view a, std::string_view capability) {
  auto gpu = parseComputeCapability(capability);
  bool ptx = a.substr(0, 8) == "compute_";
  if (!gpu || (!ptx && a.substr(0, 3) != "sm_")) return CodeFit::Unknown;
  std::string_view digits = a.substr(ptx ? 8 : 3);
  char suffix = 0;  // 'a': architecture-specific, 'f': family-specific
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    suffix = digits.back();
    digits.remove_suffix(1);
  }
  auto n = util::parseUint(digits);
  if (!n || digits.size() < 2 || digits.size() > 3 || digits[0] == '0') return CodeFit::Unknown;
  int major = static_cast<int>(*n / 10), minor = static_cast<int>(*n % 10);
  bool fits;
  if (suffix == 'a')
    fits = gpu->major == major && gpu->minor == minor;
  else if (suffix == 'f' || !ptx)
    fits = gpu->major == major && gpu->minor >= minor;
  else
    fits = gpu->major > major || (gpu->major == major && gpu->minor >= minor);
  if (!fits) return CodeFit::None;
  return ptx ? CodeFit::Ptx : CodeFit::Sass;
}

std::vector<LibraryVerdict> judgeGpuCode(const std::vector<GpuCode>& code, std::string_view capability) {
  std::vector<LibraryVerdict> out;
  out.reserve(code.size());
  for (const auto& c : code) {
    LibraryVerdict v{c.library, c.layer, CodeFit::Unknown, c.sass, c.ptx, {}};
    bool known = false;
    std::vector<std::string> ptxCover;
    for (const auto* list : {&c.sass, &c.ptx})
      for (const auto& e : *list) {
        CodeFit f = entryFits(e, capability);
        known |= f != CodeFit::Unknown;
        if (f == CodeFit::Sass) v.covering.push_back(e);
        if (f == CodeFit::Ptx) ptxCover.push_back(e);
      }
    if (!v.covering.empty())
      v.fit = CodeFit::Sass;
    else if (!ptxCover.empty())
      v.fit = CodeFit::Ptx, v.covering = std::move(ptxCover);
    else if (known)
      v.fit = CodeFit::None;
    out.push_back(std::move(v));
  }
  return out;
}

CodeFit worstFit(const std::vector<LibraryVerdict>& verdicts) {
  CodeFit worst = CodeFit::Unknown;
  auto rank = [](CodeFit f) { return f == CodeFit::None ? 3 : f == CodeFit::Ptx ? 2 : f == CodeFit::Sass ? 1 : 0; };
  for (const auto& v : verdicts)
    if (rank(v.fit) > rank(worst)) worst = v.fit;
  return worst;
}

std::string codeNeededBy(std::string_view capability) {
  auto c = parseComputeCapability(capability);
  if (!c) return "code for compute capability " + std::string(capability);
  std::string base = std::to_string(c->major), own = base + std::to_string(c->minor);
  std::string sass = c->minor == 0 ? "sm_" + own + " or sm_" + own + "a" : "sm_" + base + "0 to sm_" + own;
  return "SASS " + sass + ", or PTX compute_" + own + " or older";
}

std::string explainVerdict(const LibraryVerdict& v, std::string_view gpu, std::string_view capability) {
  auto list = [](const std::vector<std::string>& l) { return l.empty() ? std::string("none") : util::join(l, ", "); };
  std::string has = "SASS " + list(v.sass) + "; PTX " + list(v.ptx);
  switch (v.fit) {
    case CodeFit::Sass:
      return v.library + " runs on " + std::string(gpu) + " through its SASS " + util::join(v.covering, ", ");
    case CodeFit::Ptx:
      return v.library + " has no SASS for " + std::string(gpu) + " (" + has + "): the driver JIT-compiles its PTX " +
             util::join(v.covering, ", ") +
             " at first start (minutes for a large library, on every node whose JIT cache is cold) and the JIT cache "
             "(CUDA_CACHE_MAXSIZE) must hold the result";
    case CodeFit::None:
      return v.library + " cannot run on " + std::string(gpu) + ": it has " + has + " and the GPU needs " +
             codeNeededBy(capability) + " (\"no kernel image is available for execution on the device\")";
    case CodeFit::Unknown: break;
  }
  return v.library + ": no architecture it lists is known (" + has + ")";
}

nlohmann::json generationSupport(const std::vector<GpuCode>& code) {
  nlohmann::json out = nlohmann::json::array();
  if (code.empty()) return out;
  for (const auto& g : judgedGenerations()) {
    nlohmann::json caps = nlohmann::json::object();
    std::set<std::string> cannot;
    int sass = 0, ptx = 0, none = 0, unknown = 0;
    for (const char* cap : g.capabilities) {
      auto verdicts = judgeGpuCode(code, cap);
      CodeFit f = worstFit(verdicts);
      caps[cap] = toString(f);
      (f == CodeFit::Sass ? sass : f == CodeFit::Ptx ? ptx : f == CodeFit::None ? none : unknown)++;
      for (const auto& v : verdicts)
        if (v.fit == CodeFit::None && cannot.size() < kNamedPerGeneration) cannot.insert(v.library);
    }
    std::string fit = unknown == static_cast<int>(g.capabilities.size()) ? "unknown"
                      : none == 0 && ptx == 0                         ? "sass"
                      : none == 0                                     ? "ptx"
                      : sass + ptx > 0                                ? "partial"
                                                                      : "none";
    nlohmann::json j = {{"generation", g.name}, {"fit", fit}, {"capabilities", caps}};
    if (!cannot.empty()) j["cannot_run"] = std::vector<std::string>(cannot.begin(), cannot.end());
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace kernodeck::gpu
