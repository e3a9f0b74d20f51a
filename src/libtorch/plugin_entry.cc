// The LibTorch plugin's one exported symbol (see abi.h): compiled into
// libkernodeck_torch.so only, never into kdk_libtorch. Taking each function's address
// into its typed member is what makes the compiler check the plugin's signatures.
// The probe-only build's plugin (KERNODECK_PLUGIN_PROBE_ONLY) holds the probe's
// computation alone.
#include "kernodeck/libtorch/abi.h"

extern "C" __attribute__((visibility("default"))) const kernodeck::libtorch::PluginAbi* kdk_torch_plugin_abi() {
  namespace lt = kernodeck::libtorch;
  static const lt::PluginAbi abi{
      lt::kAbiVersion,
      sizeof(lt::PluginAbi),
      KDK_TORCH_CXX_BUILD,
      &lt::entry::torchInfo,
      &lt::entry::compute,
#ifdef KERNODECK_PLUGIN_PROBE_ONLY
      nullptr,
      nullptr,
      nullptr,
      nullptr,
#else
      &lt::entry::resumeCheck, &lt::entry::resumeInspect, &lt::entry::resumeContinue, &lt::entry::parsePt,
#endif
  };
  return &abi;
}
