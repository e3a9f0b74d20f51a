// The hook's decision: a container's GPU needs (its NVIDIA_* environment, its
// kernodeck.expect/v1 expectation, the devices its spec passes) against what
// the host really has. Findings say what does not fit and how to fix it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/gpu/expectation.h"
#include "kernodeck/gpu/requirement.h"
#include "kernodeck/host/host_facts.h"
#include "kernodeck/oci/runtime_spec.h"
#include "kernodeck/report/report.h"

namespace kernodeck::hook {

struct ContainerCheck {
  bool gpuContainer = false;             // asks for an NVIDIA or AMD GPU in any way
  std::string vendor;                    // "nvidia", "amd" or ""
  int requestedGpus = 0;                 // -1: all
  std::vector<std::string> passedNodes;  // device paths in the spec that are GPU nodes
  std::vector<report::Finding> findings;
  bool blocking() const;  // any error-severity finding
};

// `hostGroups` maps group names to gids on the host (for render/video checks).
ContainerCheck checkContainer(const host::HostFacts& host, const oci::ContainerSpec& spec,
                              const std::optional<gpu::Expectation>& expect,
                              const std::map<std::string, uint32_t>& hostGroups = {});

// Parses /etc/group content into name -> gid.
std::map<std::string, uint32_t> parseGroupFile(std::string_view text);

}  // namespace kernodeck::hook
