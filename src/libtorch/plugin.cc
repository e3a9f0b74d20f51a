// See plugin.h.
#include "kernodeck/libtorch/plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "kernodeck/util/self_path.h"

namespace kernodeck::libtorch {

namespace {

struct Loaded {
  const PluginAbi* abi = nullptr;
  std::string error;
};

const Loaded& loaded() {
  static Loaded p;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("KERNODECK_TORCH_PLUGIN"); env && *env) candidates.push_back(env);
    for (auto& c : util::pluginPaths("libkernodeck_torch.so")) candidates.push_back(std::move(c));
    candidates.push_back("/usr/local/lib/kernodeck/libkernodeck_torch.so");
    for (const auto& c : candidates) {
      if (::access(c.c_str(), R_OK) != 0) continue;
      auto r = loadPlugin(c);
      if (r) {
        p.abi = *r;
        p.error.clear();
        return;
      }
      if (p.error.empty()) p.error = r.error().message;
    }
    if (p.error.empty())
      p.error =
          "this kernodeck has no LibTorch plugin (built without LibTorch, or libkernodeck_torch.so is not beside it: "
          "install the kernodeck-torch package); without it the probe's compute check, `resume check` and legacy .pt "
          "files are unavailable";
  });
  return p;
}

}  // namespace

Result<const PluginAbi*> loadPlugin(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    return Error::Unsupported(e ? std::string(e) : path + ": cannot be loaded");
  }
  auto refuse = [&](std::string why) -> Result<const PluginAbi*> {
    ::dlclose(handle);
    return Error::Unsupported(path + ": " + why);
  };
  using Entry = const PluginAbi* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, kEntrySymbol));
  if (!entry) return refuse(std::string("not a Kernodeck LibTorch plugin (no ") + kEntrySymbol + " symbol)");
  const PluginAbi* abi = entry();
  if (!abi) return refuse("the LibTorch plugin returned no interface");
  // abi_version and struct_size lead the struct in every version, so they can be read first.
  if (abi->abi_version != kAbiVersion)
    return refuse("LibTorch plugin ABI version " + std::to_string(abi->abi_version) +
                  ", this kernodeck expects version " + std::to_string(kAbiVersion) +
                  ": install the plugin built with this kernodeck");
  if (abi->struct_size != sizeof(PluginAbi))
    return refuse("LibTorch plugin ABI version " + std::to_string(abi->abi_version) + " has a " +
                  std::to_string(abi->struct_size) + "-byte interface, this kernodeck's version " +
                  std::to_string(kAbiVersion) + " has " + std::to_string(sizeof(PluginAbi)) +
                  " bytes: install the plugin built with this kernodeck");
  if (!abi->torch_info || !abi->compute || !abi->cxx_build)
    return refuse("the LibTorch plugin lacks its probe entry points");
  return abi;
}

const PluginAbi* plugin() { return loaded().abi; }

const std::string& pluginError() { return loaded().error; }

Result<const PluginAbi*> reportEntries(const PluginAbi* abi) {
  if (!abi) return Error::Unsupported(pluginError());
  if (!abi->resume_check || !abi->resume_inspect || !abi->resume_continue)
    return Error::Unsupported("the LibTorch plugin was built for the probe alone (no resume entry points)");
  if (std::string(abi->cxx_build) != KDK_TORCH_CXX_BUILD)
    return Error::Unsupported(std::string("the LibTorch plugin was compiled as \"") + abi->cxx_build +
                              "\", this kernodeck as \"" + KDK_TORCH_CXX_BUILD +
                              "\": a report cannot cross between them; rebuild both together");
  return abi;
}

}  // namespace kernodeck::libtorch
