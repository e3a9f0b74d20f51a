// The LibTorch plugin, libkernodeck_torch.so, loaded with dlopen on first use.
//
// LibTorch's load costs hundreds of milliseconds and of resident megabytes, so only
// the commands that compute (probe, resume, `.pt` outputs) load it; every other
// command starts without it. This module is the one place that finds, opens and
// checks the plugin; probe and record call its entry points through the PluginAbi
// (abi.h) that plugin() returns.
#pragma once

#include <string>

#include "kernodeck/libtorch/abi.h"
#include "kernodeck/util/result.h"

namespace kernodeck::libtorch {

// Opens the plugin at `path` and checks its interface: the entry symbol, then
// abi_version and struct_size against this build's, then the entries every plugin
// has. Each failure is an Error naming the file (and, for a version or size, both
// values). A plugin that passes stays loaded for the life of the process.
Result<const PluginAbi*> loadPlugin(const std::string& path);

// The process's plugin, or nullptr when none can be used (a build without
// LibTorch, the file missing, a load error, another ABI version). Searched once:
// $KERNODECK_TORCH_PLUGIN, beside the executable, ../lib/kernodeck/ beside it,
// /usr/local/lib/kernodeck/; the first that loads and checks wins.
const PluginAbi* plugin();

// Why plugin() is null, for messages (the first candidate's error); empty when loaded.
const std::string& pluginError();

// `abi` when its entries that fill a report::Report may be called: the plugin has
// them and was compiled by the same compiler with the same standard-library ABI
// (cxx_build equal to this build's); otherwise an Error saying which is not so.
Result<const PluginAbi*> reportEntries(const PluginAbi* abi);

}  // namespace kernodeck::libtorch
