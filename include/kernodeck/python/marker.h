// PEP 508 environment markers, evaluated against an image's environment.
// Values an image cannot tell (platform_release, platform_version) make a
// marker undecidable instead of guessed.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "kernodeck/util/result.h"
#include "kernodeck/util/tri.h"

namespace kernodeck::python {

using kernodeck::Tri;

// Marker variables; a missing key means "cannot be known".
using MarkerEnv = std::map<std::string, std::string>;

// The environment of a CPython in an image: version "3.11.2", OCI architecture "amd64".
MarkerEnv imageMarkerEnv(std::string_view pythonFullVersion, std::string_view ociArch,
                         std::string_view implementation = "cpython");

class Marker {
 public:
  static Result<Marker> parse(std::string_view s);
  // `extra` is compared after PEP 685 normalisation; empty means no extra.
  Tri evaluate(const MarkerEnv& env, std::string_view extra = "") const;
  const std::string& str() const { return text_; }
  // The marker as packaging prints it (`python_version < "2.7" and extra == "x"`): whitespace
  // and quotes normalised, extra names normalised (PEP 685), parentheses only where an `or`
  // sits inside an `and`. Equal for equivalent spellings of one marker.
  std::string canonical() const;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
  std::string text_;
};

}  // namespace kernodeck::python
