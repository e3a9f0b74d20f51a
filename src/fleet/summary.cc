// See summary.h.
#include "kernodeck/fleet/summary.h"
#include "kernodeck/util/html.h"

#include <algorithm>
#include <map>

#include "kernodeck/attest/attached_report.h"
#include "kernodeck/attest/decision.h"
#include "kernodeck/gpu/gpu_models.h"
#include "kernodeck/registry/reference.h"
#include "kernodeck/report/report.h"
#include "kernodeck/report/report_doc.h"

namespace kernodeck::fleet {

using nlohmann::json;

namespace {

// Every verdict a row can have, in the order the summary counts and prints them.
constexpr const char* kVerdicts[] = {"pass", "fail", "incomplete", "missing", "unreadable"};

// What a cell of the GPU matrix may say.
bool isFit(const std::string& f) {
  return f == "sass" || f == "ptx" || f == "partial" || f == "none" || f == "unknown";
}

}  // namespace

json gpuGenerationsOf(const json& report) {
  if (!report.is_object() || !report.contains("gpu_support") || !report["gpu_support"].is_object()) return nullptr;
  const json& gens = report["gpu_support"].value("generations", json::array());
  if (!gens.is_array()) return nullptr;
  json out = json::object();
  for (const auto& g : gpu::judgedGenerations()) out[g.name] = "unknown";
  for (const auto& g : gens) {
    if (!g.is_object() || !g.contains("generation") || !g["generation"].is_string()) continue;
    std::string name = g["generation"], fit = g.contains("fit") && g["fit"].is_string() ? g["fit"] : "unknown";
    if (out.contains(name)) out[name] = isFit(fit) ? fit : "unknown";
  }
  return out;
}

namespace {

// The codes found, each with the images it is live in (most first) and those where it is waived.
json findingsByCode(const std::map<std::string, std::pair<int, std::string>>& codes,
                    const std::map<std::string, int>& suppressedCodes) {
  json byCode = json::array();
  for (const auto& [code, v] : codes) {
    json c = {{"code", code}, {"severity", v.second}, {"images", v.first}};
    if (auto sup = suppressedCodes.find(code); sup != suppressedCodes.end()) c["suppressed_images"] = sup->second;
    byCode.push_back(c);
  }
  std::stable_sort(byCode.begin(), byCode.end(),
                   [](const json& a, const json& b) { return a["images"].get<int>() > b["images"].get<int>(); });
  return byCode;
}

// The ten layers shared by most failing images (a layer of one image is that image's own; the
// question is which shared, base, layers fail).
json sharedFailingLayers(const Plan& plan, const std::map<std::string, int>& failingLayers) {
  json layers = json::array();
  std::vector<std::pair<std::string, int>> fl(failingLayers.begin(), failingLayers.end());
  std::stable_sort(fl.begin(), fl.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < fl.size() && layers.size() < 10; ++i) {
    int total = 0;
    for (const auto& img : plan.images)
      for (const auto& l : img.layers) total += l.str() == fl[i].first;
    if (total >= 2) layers.push_back({{"layer", fl[i].first}, {"failing_images", fl[i].second}, {"images", total}});
  }
  return layers;
}

}  // namespace

json gatherSummary(const Plan& plan, const registry::ClientOptions& opts, const attest::Key* key, int failOn) {
  json images = json::array();
  std::map<std::string, int> verdicts;
  for (const char* v : kVerdicts) verdicts[v] = 0;
  std::map<std::string, std::pair<int, std::string>> codes;  // code -> (images, severity), live findings
  std::map<std::string, int> suppressedCodes;                // code -> images where it is waived
  std::map<std::string, int> failingLayers;                  // layer -> failing images that have it
  for (const auto& img : plan.images) {
    json row = {{"image", img.ref()},
                {"repository", img.repository},
                {"tags", img.tags},
                {"manifest_digest", img.manifest.digest.str()}};
    // "missing": no attached report counts; "unreadable": the reports could not be listed at all
    // (the registry, its credentials or the cache refused), which says nothing about the image.
    std::string verdict = "missing";
    auto ref = registry::parseReference(img.ref());
    if (!ref.ok()) {
      verdict = "unreadable";
      row["problem"] = ref.error().message;
    } else {
      registry::Client c(*ref, opts);
      auto reports = attest::readReports(c, img.manifest.digest, key);
      if (!reports.ok()) {
        verdict = "unreadable";
        row["problem"] = reports.error().message;
      } else if (const attest::AttachedReport* best = attest::newestGood(*reports)) {
        // The full report travels beside the signed envelope, fetched by the digest it names.
        auto full = attest::fetchReport(c, *best);
        if (!full.ok()) {
          row["problem"] = full.error().message;
        } else {
          verdict = attest::verdictOf(*full, failOn);
          row["report"] = best->artifact.digest.str();
          row["signature"] = best->signature;
          // Live findings by severity; a suppressed (waived) one counts apart, as no verdict
          // counts it: three waived errors beside a pass are not three errors.
          json counts = {{"info", 0}, {"warning", 0}, {"error", 0}};
          json suppressed = counts;  // as the report's summary.suppressed
          std::map<std::string, bool> seen, seenSuppressed;
          auto doc = report::parseReportDoc(*full);
          if (!doc.ok()) row["problem"] = "report " + best->artifact.digest.str() + ": " + doc.error().message;
          for (const auto& f : doc.ok() ? doc->findings : std::vector<report::ReportDoc::Finding>{}) {
            if (f.suppressed) {
              if (suppressed.contains(f.severity)) suppressed[f.severity] = suppressed[f.severity].get<int>() + 1;
              if (!seenSuppressed[f.code]) suppressedCodes[f.code]++;
              seenSuppressed[f.code] = true;
              if (!codes.count(f.code)) codes[f.code] = {0, f.severity};
              continue;
            }
            if (counts.contains(f.severity)) counts[f.severity] = counts[f.severity].get<int>() + 1;
            if (!seen[f.code]) {
              codes[f.code].first++;
              codes[f.code].second = f.severity;
              seen[f.code] = true;
            }
          }
          row["findings"] = counts;
          if (suppressed != json{{"info", 0}, {"warning", 0}, {"error", 0}}) row["suppressed"] = suppressed;
          if (doc.ok())
            if (json g = gpuGenerationsOf(doc->json); !g.is_null()) row["gpu_generations"] = std::move(g);
        }
      } else {
        row["problem"] = reports->empty()                    ? "no report attached"
                         : reports->front().problems.empty() ? "no attached report passes its checks"
                                                             : reports->front().problems.front().message;
      }
    }
    row["verdict"] = verdict;
    verdicts[verdict]++;
    if (verdict == "fail")
      for (const auto& l : img.layers) failingLayers[l.str()]++;
    images.push_back(row);
  }
  json out = {{"schema", "kernodeck.fleet-summary/v1"},
              {"images", images},
              {"verdicts", verdicts},
              {"findings_by_code", findingsByCode(codes, suppressedCodes)},
              {"failing_layers", sharedFailingLayers(plan, failingLayers)}};
  if (std::any_of(images.begin(), images.end(), [](const json& r) { return r.contains("gpu_generations"); })) {
    json names = json::array();
    for (const auto& g : gpu::judgedGenerations()) names.push_back(g.name);
    out["gpu_generations"] = names;
  }
  return out;
}

int summaryExitCode(const json& s) {
  const json& v = s["verdicts"];
  if (v.value("missing", 0) > 0 || v.value("incomplete", 0) > 0 || v.value("unreadable", 0) > 0)
    return report::kExitIncomplete;
  if (v.value("fail", 0) > 0) return report::kExitFindings;
  return report::kExitOk;
}

std::string summaryText(const json& s) {
  std::string out = "kernodeck fleet summary: " + std::to_string(s["images"].size()) + " images\n\n";
  for (const auto& row : s["images"]) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-10s %s", row["verdict"].get<std::string>().c_str(),
                  row["image"].get<std::string>().c_str());
    out += line;
    if (row.contains("problem")) out += "  (" + row["problem"].get<std::string>() + ")";
    out += "\n";
  }
  out += "\nVerdicts:";
  for (const char* v : kVerdicts) out += std::string(" ") + v + " " + std::to_string(s["verdicts"].value(v, 0));
  out += "\n";
  if (!s["findings_by_code"].empty()) {
    out += "\nFindings by code (images)\n";
    for (const auto& c : s["findings_by_code"])
      out += "  " + std::to_string(c["images"].get<int>()) + "  " + c["code"].get<std::string>() + " (" +
             c["severity"].get<std::string>() +
             (c.contains("suppressed_images") ? "; suppressed in " + std::to_string(c["suppressed_images"].get<int>())
                                              : std::string()) +
             ")\n";
  }
  if (s.contains("gpu_generations") && s["gpu_generations"].is_array()) {
    // images x GPU generations, each image by its first tag (else its digest), the column as wide
    // as its longest name (at most 80).
    auto label = [](const json& row) {
      if (row.contains("tags") && row["tags"].is_array() && !row["tags"].empty() && row["tags"][0].is_string() &&
          row.contains("repository") && row["repository"].is_string())
        return row["repository"].get<std::string>() + ":" + row["tags"][0].get<std::string>();
      return row["image"].get<std::string>();
    };
    size_t w = 5;
    for (const auto& row : s["images"]) w = std::max(w, label(row).size());
    w = std::min<size_t>(w, 80);
    out +=
        "\nGPU generations (sass: runs; ptx: through PTX JIT only; partial: on some of its GPUs; none: cannot "
        "run; -: no GPU code read)\n  " +
        std::string("image") + std::string(w - 5 + 2, ' ');
    for (const auto& g : s["gpu_generations"]) {
      std::string name = g.get<std::string>();
      out += name + std::string(name.size() < 9 ? 10 - name.size() : 1, ' ');
    }
    while (out.back() == ' ') out.pop_back();
    out += "\n";
    for (const auto& row : s["images"]) {
      std::string image = label(row);
      if (image.size() > w) image = image.substr(0, w - 3) + "...";
      out += "  " + image + std::string(w - image.size() + 2, ' ');
      for (const auto& g : s["gpu_generations"]) {
        std::string name = g.get<std::string>();
        std::string cell = "-";
        if (row.contains("gpu_generations")) cell = row["gpu_generations"].value(name, std::string("unknown"));
        out += cell + std::string(std::max<size_t>(name.size(), 9) + 1 - cell.size(), ' ');
      }
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += "\n";
    }
  }
  if (!s["failing_layers"].empty()) {
    out += "\nLayers most common among failing images\n";
    for (const auto& l : s["failing_layers"])
      out += "  " + std::to_string(l["failing_images"].get<int>()) + "/" + std::to_string(l["images"].get<int>()) +
             "  " + l["layer"].get<std::string>() + "\n";
  }
  return out;
}

namespace {

std::string esc(const std::string& s) { return util::htmlEscape(s); }

}  // namespace

std::string summaryHtml(const json& s) {
  std::string o =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Kernodeck fleet summary</title>\n"
      "<style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:left}.pass{color:#070}.fail{color:#b00}"
      ".incomplete,.missing,.unreadable{color:#a60}</style></head><body>\n<h1>Kernodeck fleet summary</h1>\n<p>";
  for (const char* v : kVerdicts)
    o += std::string("<span class=\"") + v + "\">" + v + ": " + std::to_string(s["verdicts"].value(v, 0)) + "</span> ";
  o += "</p>\n<h2>Images</h2>\n<table>\n<tr><th>image</th><th>tags</th><th>verdict</th><th>errors</th><th>warnings</"
       "th><th>suppressed</th></tr>\n";
  for (const auto& row : s["images"]) {
    std::string tags;
    for (const auto& t : row["tags"]) tags += (tags.empty() ? "" : ", ") + t.get<std::string>();
    std::string v = row["verdict"].get<std::string>();
    json f = row.value("findings", json::object()), sup = row.value("suppressed", json::object());
    o += "<tr><td>" + esc(row["image"].get<std::string>()) + "</td><td>" + esc(tags) + "</td><td class=\"" + v + "\">" +
         v + "</td><td>" + std::to_string(f.value("error", 0)) + "</td><td>" + std::to_string(f.value("warning", 0)) +
         "</td><td>" + std::to_string(sup.value("error", 0) + sup.value("warning", 0) + sup.value("info", 0)) +
         "</td></tr>\n";
  }
  o += "</table>\n<h2>Findings by code</h2>\n<table>\n<tr><th>code</th><th>severity</th><th>images</th></tr>\n";
  for (const auto& c : s["findings_by_code"])
    o += "<tr><td>" + esc(c["code"].get<std::string>()) + "</td><td>" + esc(c["severity"].get<std::string>()) +
         "</td><td>" + std::to_string(c["images"].get<int>()) + "</td></tr>\n";
  o += "</table>\n<h2>Layers most common among failing images</h2>\n<table>\n<tr><th>layer</th><th>failing "
       "images</th><th>images</th></tr>\n";
  for (const auto& l : s["failing_layers"])
    o += "<tr><td>" + esc(l["layer"].get<std::string>()) + "</td><td>" +
         std::to_string(l["failing_images"].get<int>()) + "</td><td>" + std::to_string(l["images"].get<int>()) +
         "</td></tr>\n";
  o += "</table>\n";
  if (s.contains("gpu_generations") && s["gpu_generations"].is_array()) {
    o += "<h2>GPU generations</h2>\n<table>\n<tr><th>image</th>";
    for (const auto& g : s["gpu_generations"]) o += "<th>" + esc(g.get<std::string>()) + "</th>";
    o += "</tr>\n";
    for (const auto& row : s["images"]) {
      o += "<tr><td>" + esc(row["image"].get<std::string>()) + "</td>";
      for (const auto& g : s["gpu_generations"]) {
        std::string cell = row.contains("gpu_generations")
                               ? row["gpu_generations"].value(g.get<std::string>(), std::string("unknown"))
                               : "-";
        o += "<td>" + esc(cell) + "</td>";
      }
      o += "</tr>\n";
    }
    o += "</table>\n";
  }
  return o + "</body></html>\n";
}

}  // namespace kernodeck::fleet
