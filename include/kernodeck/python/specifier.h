// PEP 440 version specifiers (~= == != <= >= < > ===, wildcards) and sets of
// them, with the pre-release rules of the `packaging` library that pip uses.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/python/version.h"

namespace kernodeck::python {

class Specifier {
 public:
  static Result<Specifier> parse(std::string_view s);
  const std::string& op() const { return op_; }
  const std::string& version() const { return version_; }  // as written (may end in ".*")
  std::string str() const { return op_ + version_; }
  // Whether this specifier admits pre-releases by itself (its version is one).
  bool prereleases() const;
  // `prereleases`: nullopt means "as the specifier says".
  bool contains(const Version& v, std::optional<bool> prereleases = std::nullopt) const;
  // For === only: the raw string compare.
  bool containsString(std::string_view raw) const;

 private:
  std::string op_, version_;
};

class SpecifierSet {
 public:
  // Comma-separated; empty text is the set that admits everything.
  static Result<SpecifierSet> parse(std::string_view s);
  const std::vector<Specifier>& specs() const { return specs_; }
  bool empty() const { return specs_.empty(); }
  std::string str() const;
  // pip check calls contains(version, prereleases=True).
  bool contains(const Version& v, std::optional<bool> prereleases = std::nullopt) const;

 private:
  std::vector<Specifier> specs_;
};

}  // namespace kernodeck::python
