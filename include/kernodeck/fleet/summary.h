// `fleet summary`: the reports attached to a plan's images gathered into one table (images x
// verdict), the findings by code, and the shared layers most common among failing images
// (usually a base), the GPU generations each image's GPU code runs on, as JSON (kernodeck.fleet-summary/v1), text or a self-contained HTML page.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "kernodeck/attest/dsse.h"
#include "kernodeck/fleet/plan.h"
#include "kernodeck/registry/client.h"

namespace kernodeck::fleet {

// Verdict per image: "pass", "fail", "incomplete" (the audit could not complete) or "missing"
// (no attached report passes its checks: absent, damaged, about another image, or not signed
// by `key` when one is given).
nlohmann::json gatherSummary(const Plan& plan, const registry::ClientOptions& opts, const attest::Key* key, int failOn);

// The GPU generations an audit report's `gpu_support` section says the image's GPU code runs on
// (audit/gpu_support.h): {"Volta": "none", ..., "Blackwell": "ptx"}, each "sass", "ptx",
// "partial", "none" or "unknown"; null when the report has no such section (no GPU code read).
// The summary's rows carry it as `gpu_generations`, the summary the column names as
// `gpu_generations` when some row has them: a matrix images x GPU generations.
nlohmann::json gpuGenerationsOf(const nlohmann::json& report);

std::string summaryText(const nlohmann::json& summary);
std::string summaryHtml(const nlohmann::json& summary);

// 0 every image passes, 1 some fail, 3 some report is missing or incomplete.
int summaryExitCode(const nlohmann::json& summary);

}  // namespace kernodeck::fleet
