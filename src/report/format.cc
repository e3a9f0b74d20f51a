// `--format`: parses the name and renders a report in it (formats.h).

#include "kernodeck/report/formats.h"
#include "kernodeck/util/hash.h"

namespace kernodeck::report {

namespace {

struct Named {
  const char* name;
  Format format;
};
constexpr Named kFormats[] = {{"text", Format::Text},           {"json", Format::Json}, {"sarif", Format::Sarif},
                              {"cyclonedx", Format::CycloneDx}, {"spdx", Format::Spdx}, {"html", Format::Html},
                              {"markdown", Format::Markdown}};

}  // namespace

Result<Format> parseFormat(std::string_view name) {
  for (const auto& f : kFormats)
    if (name == f.name) return f.format;
  return Error::Invalid("--format takes " + std::string(formatNames()) + ", not '" + std::string(name) + "'");
}

Result<Format> parseFormatOptions(std::string_view format, bool jsonAlias) {
  if (jsonAlias && !format.empty() && format != "json")
    return Error::Invalid("--json and --format " + std::string(format) + " contradict each other");
  return parseFormat(format.empty() ? (jsonAlias ? "json" : "text") : format);
}

const char* formatNames() { return "text, json, sarif, cyclonedx, spdx, html or markdown"; }

std::string render(const Report& r, Format format, int failOn) {
  switch (format) {
    case Format::Text: return r.toText(failOn);
    case Format::Json: return r.toJson(failOn).dump(2) + "\n";
    case Format::Sarif: return toSarif(r).dump(2) + "\n";
    case Format::CycloneDx: return toCycloneDx(r, failOn).dump(2) + "\n";
    case Format::Spdx: return toSpdx(r, failOn).dump(2) + "\n";
    case Format::Html: return toHtml(r, failOn);
    case Format::Markdown: return toMarkdown(r, failOn);
  }
  return r.toText(failOn);
}

std::string uuidFrom(const std::string& seed) {
  std::string h = util::sha256Hex(seed).substr(0, 32);
  h[12] = '5';                                                  // version: name-based (SHA)
  h[16] = "89ab"[std::stoi(h.substr(16, 1), nullptr, 16) & 3];  // variant: RFC 4122
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20, 12);
}

std::string reportUuid(const Report& r, int failOn) {
  nlohmann::json content = r.toJson(failOn);
  content.erase("created");
  return uuidFrom(content.dump());
}

}  // namespace kernodeck::report
