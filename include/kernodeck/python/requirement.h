// PEP 508 dependency specifications: name, extras, version specifier or URL,
// environment marker.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/python/marker.h"
#include "kernodeck/python/specifier.h"

namespace kernodeck::python {

struct Requirement {
  std::string name;  // as written
  std::string key;   // canonicalised (PEP 503)
  std::vector<std::string> extras;
  SpecifierSet specifier;
  std::string url;  // "name @ url"
  std::optional<Marker> marker;
  std::string text;  // as written

  static Result<Requirement> parse(std::string_view s);
  // packaging's Requirement equality: the same canonical name, extras (normalised), URL,
  // specifiers (versions compared without trailing zeros, except for ~=) and marker.
  bool equivalent(const Requirement& other) const;
};

}  // namespace kernodeck::python
