// The LibTorch plugin, libkernodeck_torch.so, loaded with dlopen on first use.
//
// LibTorch's load costs hundreds of milliseconds and of resident megabytes, so only
// the commands that compute (probe, resume, `.pt` outputs) load it; every other
// command starts without it. This module is the one place that finds and opens the
// plugin; probe and record reach its entry points through pluginSymbol().
#pragma once

#include <string>

namespace kernodeck::libtorch {

// The plugin's exported symbol `name`, or nullptr when the plugin cannot be loaded
// (a build without LibTorch, the file missing, a load error) or lacks the symbol.
// The plugin is searched once per process: $KERNODECK_TORCH_PLUGIN, beside the
// executable, ../lib/kernodeck/ beside it, /usr/local/lib/kernodeck/.
void* pluginSymbol(const char* name);

// Why the plugin is unavailable, for messages; empty when it is loaded.
const std::string& pluginError();

}  // namespace kernodeck::libtorch
