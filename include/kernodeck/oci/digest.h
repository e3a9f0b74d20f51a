// OCI content digests: "algorithm:encoded" per the OCI image spec.
#pragma once

#include <string>
#include <string_view>

#include "kernodeck/util/result.h"

namespace kernodeck::oci {

struct Digest {
  std::string algorithm;  // "sha256", "sha512", or an unregistered one
  std::string encoded;    // hex for the registered algorithms

  std::string str() const { return algorithm + ":" + encoded; }
  // True for the algorithms Kernodeck can verify (sha256, sha512).
  bool verifiable() const { return algorithm == "sha256" || algorithm == "sha512"; }
  bool operator==(const Digest& o) const { return algorithm == o.algorithm && encoded == o.encoded; }
  bool operator<(const Digest& o) const { return str() < o.str(); }
};

// Parses per the spec grammar. Registered algorithms are held to their exact form
// (lower-case hex, 64 chars for sha256, 128 for sha512); others must match the
// general grammar and come back with verifiable() == false.
Result<Digest> parseDigest(std::string_view s);

}  // namespace kernodeck::oci
