// See exceptions_file.h.
#include "kernodeck/audit/exceptions_file.h"

#include "kernodeck/hook/yaml_document.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/safe_file.h"

namespace kernodeck::audit {

Result<report::ExceptionsFile> parseExceptionsText(std::string_view text, const std::string& name,
                                                   std::string_view today) {
  if (text.size() > kExceptionsMaxBytes)
    return Error::Invalid(name + ": larger than " + std::to_string(kExceptionsMaxBytes) + " bytes");
  auto doc = hook::parseYaml(text);
  if (!doc.ok()) return Error::Invalid(name + ": not YAML or JSON: " + doc.error().message);
  // The typed reader reads plain JSON values; key order does not matter to it.
  const nlohmann::json j(*doc);
  return report::parseExceptions(j, name, util::sha256Hex(text), today);
}

Result<report::ExceptionsFile> loadExceptionsFile(const std::string& path, std::string_view today) {
  auto text = util::readFileLimited(path, kExceptionsMaxBytes);
  if (!text.ok()) return text.error();
  return parseExceptionsText(*text, path, today);
}

}  // namespace kernodeck::audit
