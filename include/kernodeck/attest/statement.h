// in-toto Statement v1 (https://in-toto.io/Statement/v1): what an attestation is about
// (subjects named by digest) and the claim itself (a typed predicate). Kernodeck's predicate
// is in predicate.h; the subject is the audited manifest.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::attest {

inline constexpr const char* kInTotoPayloadType = "application/vnd.in-toto+json";
inline constexpr const char* kStatementType = "https://in-toto.io/Statement/v1";

struct Subject {
  std::string name;                           // "registry/repository"
  std::map<std::string, std::string> digest;  // algorithm -> hex
};

struct Statement {
  std::vector<Subject> subjects;
  std::string predicateType;
  nlohmann::json predicate;
};

std::string serializeStatement(const Statement& s);
// Parses and checks the shape (_type, at least one subject with a digest, a predicateType).
Result<Statement> parseStatement(std::string_view json);

}  // namespace kernodeck::attest
