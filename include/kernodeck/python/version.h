// PEP 440 versions: parsing (with the normalisations pip accepts), canonical
// form, ordering (epochs, pre/post/dev releases, local labels).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::python {

class Version {
 public:
  static Result<Version> parse(std::string_view s);

  uint64_t epoch() const { return epoch_; }
  const std::vector<uint64_t>& release() const { return release_; }
  // Pre-release: ("a"|"b"|"rc", number).
  const std::optional<std::pair<std::string, uint64_t>>& pre() const { return pre_; }
  const std::optional<uint64_t>& post() const { return post_; }
  const std::optional<uint64_t>& dev() const { return dev_; }
  // Local segments, lower-cased; numbers kept as numbers.
  const std::vector<std::variant<uint64_t, std::string>>& local() const { return local_; }

  bool isPrerelease() const { return pre_.has_value() || dev_.has_value(); }
  bool isPostrelease() const { return post_.has_value(); }
  bool hasLocal() const { return !local_.empty(); }

  std::string str() const;        // canonical form: "1.0rc1.post2.dev3+cu121"
  std::string publicStr() const;  // without the local label
  std::string baseStr() const;    // epoch and release only
  std::string localStr() const;   // "cu121", or ""
  Version publicVersion() const;
  Version baseVersion() const;

  std::strong_ordering operator<=>(const Version& o) const;
  bool operator==(const Version& o) const { return (*this <=> o) == 0; }

 private:
  uint64_t epoch_ = 0;
  std::vector<uint64_t> release_;
  std::optional<std::pair<std::string, uint64_t>> pre_;
  std::optional<uint64_t> post_;
  std::optional<uint64_t> dev_;
  std::vector<std::variant<uint64_t, std::string>> local_;
};

// PEP 503 name normalisation: lower case, runs of -_. become "-".
std::string canonicalizeName(std::string_view name);

}  // namespace kernodeck::python
