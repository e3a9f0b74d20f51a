// Docker image references ("distribution/reference" grammar) and their
// normalisation: `ubuntu` is docker.io/library/ubuntu:latest.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernodeck/oci/digest.h"
#include "kernodeck/util/result.h"

namespace kernodeck::registry {

struct Reference {
  std::string registry;    // "docker.io", "localhost:5000"
  std::string repository;  // "library/ubuntu", "team/app"
  std::string tag;         // "latest" when neither tag nor digest was given
  std::optional<oci::Digest> digest;
  bool tagGiven = false;

  // The registry's API host: docker.io is served by registry-1.docker.io.
  std::string apiHost() const;
  std::string str() const;  // normalised: registry/repository[:tag][@digest]
};

Result<Reference> parseReference(std::string_view s);

// True for localhost, 127.0.0.0/8 and ::1 (with or without a port): plain HTTP is allowed there.
bool isLoopback(std::string_view hostPort);

}  // namespace kernodeck::registry
