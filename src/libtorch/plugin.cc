// See plugin.h.
#include "kernodeck/libtorch/plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace kernodeck::libtorch {

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

}  // namespace

void* pluginSymbol(const char* name) {
  const Plugin& p = plugin();
  return p.handle ? ::dlsym(p.handle, name) : nullptr;
}

const std::string& pluginError() {
  static const std::string none;
  const Plugin& p = plugin();
  return p.handle ? none : p.error;
}

}  // namespace kernodeck::libtorch
