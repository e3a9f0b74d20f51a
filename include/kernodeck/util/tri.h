// Three-valued logic: true, false, or unknown (what an image or a host cannot
// tell). Used by NVIDIA_REQUIRE_* evaluation (gpu) and PEP 508 markers (python).
#pragma once

namespace kernodeck {

enum class Tri { False, True, Unknown };

constexpr const char* toString(Tri t) {
  switch (t) {
    case Tri::False: return "false";
    case Tri::True: return "true";
    case Tri::Unknown: return "unknown";
  }
  return "?";
}

}  // namespace kernodeck
