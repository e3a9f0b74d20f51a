// A `kernodeck.host/v1` record (docs/host-record.md), as the probe reads the one kernodeck-hook
// wrote into the container: parsed once, at the boundary, into the typed HostFacts, so the probe
// works on the same type whether the facts came from a record or from the host itself.
#pragma once

#include <string_view>

#include "kernodeck/host/host_facts.h"
#include "kernodeck/util/result.h"

namespace kernodeck::host {

// The record's "host" object back into HostFacts: its root, the NVIDIA driver (version, kernel
// module, newest native CUDA) and its GPUs. Device nodes, MIG, AMD and problems are not read
// back: the probe checks the container's devices live. An absent or null field keeps its
// default (hand-written records carry only what they need); a field of the wrong type is an
// Error::Invalid that names it ("... is not a kernodeck.host/v1 record: host.nvidia.gpus[0].arch
// is not a string").
Result<HostFacts> parseHostRecord(std::string_view text);

}  // namespace kernodeck::host
