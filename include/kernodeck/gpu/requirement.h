// NVIDIA container environment variables, read as the NVIDIA container
// toolkit reads them.
//
// NVIDIA_REQUIRE_*: terms separated by spaces are OR-ed, conditions separated
// by commas inside a term are AND-ed (so "cuda<13.6 cuda>=11.6,arch=5.3" is
// cuda<13.6 OR (cuda>=11.6 AND arch=5.3)); several NVIDIA_REQUIRE_* variables
// must all hold. Properties: cuda, driver, arch (dotted numeric comparison),
// brand (case-insensitive string); unknown properties are ignored, a condition
// without an operator is an error. Kernodeck evaluates in three values: a
// property the host does not tell (brand, arch of an unknown model) makes a
// condition undecidable rather than false.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"
#include "kernodeck/util/tri.h"

namespace kernodeck::gpu {

struct Condition {
  std::string property;  // cuda | driver | arch | brand
  std::string op;        // = != < <= > >=
  std::string value;
  std::string str() const { return property + op + value; }
};

// OR of terms, each an AND of conditions.
struct Requirement {
  std::vector<std::vector<Condition>> terms;
  std::string text;
  std::string source;  // where it came from, for messages: "NVIDIA_REQUIRE_CUDA", "CUDA_VERSION", ...
};

Result<Requirement> parseRequirement(std::string_view text);

using kernodeck::toString;
using kernodeck::Tri;

// Property values of the host (one GPU for arch/brand). Empty means unknown.
struct Properties {
  std::string cuda, driver, arch, brand;
};

// `failed`, when given, receives the conditions that were false (one per term that failed).
Tri evaluate(const Requirement& r, const Properties& p, std::string* why = nullptr,
             std::vector<Condition>* failed = nullptr);

// Go's strconv.ParseBool, which the toolkit uses for NVIDIA_DISABLE_REQUIRE: 1 t T TRUE true
// True, 0 f F FALSE false False; anything else (yes, on, " true") is nullopt, which the
// toolkit reads as false.
std::optional<bool> parseGoBool(std::string_view s);

// A legacy CUDA image, as the toolkit defines it: CUDA_VERSION set and NVIDIA_REQUIRE_CUDA
// unset or empty. The toolkit gives such an image every GPU when NVIDIA_VISIBLE_DEVICES is unset.
bool isLegacyCudaImage(const std::map<std::string, std::string>& env);

// The container's requirements from its environment, as the toolkit reads them: every
// NVIDIA_REQUIRE_* but NVIDIA_REQUIRE_JETPACK, plus cuda>=MAJOR.MINOR of CUDA_VERSION for a
// legacy image; none when NVIDIA_DISABLE_REQUIRE is true by parseGoBool.
struct ContainerRequirements {
  bool disabled = false;
  bool legacy = false;  // the cuda>= requirement comes from CUDA_VERSION
  std::vector<Requirement> requirements;
  std::vector<std::string> errors;   // unparsable requirements, as messages
  std::vector<std::string> ignored;  // settings the toolkit ignores though they look meaningful
};
ContainerRequirements requirementsFromEnv(const std::map<std::string, std::string>& env);

// NVIDIA_VISIBLE_DEVICES.
struct VisibleDevices {
  enum Kind { Unset, None, Void, All, List } kind = Unset;
  std::vector<std::string> ids;  // indices, GPU-uuid, MIG-uuid, or GPU:MIG indices ("0:1")
  bool requestsGpus() const { return kind == All || (kind == List && !ids.empty()); }
  bool requestsMig() const;
};
VisibleDevices parseVisibleDevices(const std::optional<std::string>& value);

// NVIDIA_DRIVER_CAPABILITIES: compute, utility, graphics, video, display, compat32, all.
// Unset means the toolkit default (compute, utility).
std::vector<std::string> parseDriverCapabilities(const std::optional<std::string>& value);

}  // namespace kernodeck::gpu
