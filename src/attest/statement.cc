// See statement.h.
#include "kernodeck/attest/statement.h"
#include "kernodeck/util/json_read.h"

namespace kernodeck::attest {

using nlohmann::json;

std::string serializeStatement(const Statement& s) {
  json subjects = json::array();
  for (const auto& sub : s.subjects) subjects.push_back({{"name", sub.name}, {"digest", sub.digest}});
  return json{
      {"_type", kStatementType}, {"subject", subjects}, {"predicateType", s.predicateType}, {"predicate", s.predicate}}
      .dump();
}

Result<Statement> parseStatement(std::string_view text) {
  json j = util::parseUntrustedJson(text);
  if (!j.is_object()) return Error::Corrupt("not an in-toto Statement: not a JSON object");
  if (j.value("_type", "") != kStatementType)
    return Error::Corrupt("not an in-toto Statement: _type is not " + std::string(kStatementType));
  if (!j.contains("subject") || !j["subject"].is_array() || j["subject"].empty())
    return Error::Corrupt("in-toto Statement without subjects");
  if (!j.contains("predicateType") || !j["predicateType"].is_string())
    return Error::Corrupt("in-toto Statement without a predicateType");
  Statement s;
  for (const auto& sub : j["subject"]) {
    if (!sub.is_object() || !sub.contains("digest") || !sub["digest"].is_object() || sub["digest"].empty())
      return Error::Corrupt("in-toto Statement: a subject without a digest");
    Subject out;
    if (sub.contains("name") && sub["name"].is_string()) out.name = sub["name"].get<std::string>();
    for (auto it = sub["digest"].begin(); it != sub["digest"].end(); ++it) {
      if (!it.value().is_string()) return Error::Corrupt("in-toto Statement: a subject digest is not a string");
      out.digest[it.key()] = it.value().get<std::string>();
    }
    s.subjects.push_back(std::move(out));
  }
  s.predicateType = j["predicateType"].get<std::string>();
  s.predicate = j.contains("predicate") ? j["predicate"] : json::object();
  return s;
}

}  // namespace kernodeck::attest
